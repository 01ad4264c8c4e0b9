package modules

import (
	"encoding/binary"
	"fmt"

	"github.com/rowcall/rowcall"
)

// MaxTableEntries bounds a module's tables, all of them together: 1,048,576
// entries, about 8 MiB of host memory (wazero keeps one 8-byte reference per
// entry, outside the memory limit). A table holds one entry per function a
// module may call indirectly: thousands for a Go program (Go's linker writes
// one entry per function, 5,878 for the last_reply_of example), a handful for C
// or AssemblyScript. A module whose tables declare more initial entries is
// refused at registration; one whose tables could grow past it runs with each
// table's maximum lowered by [BoundTables], so table.grow returns -1 there, as
// memory.grow does at the memory limit.
const MaxTableEntries = 1 << 20

// tableType is one table's type in the binary: its limits, and where their
// encoding lies (offsets into the table section's body).
type tableType struct {
	min, max   uint64
	hasMax     bool
	start, end int // the limits' bytes: flags, min, max
}

// readTable reads a table type (tabletype, or 0x40 0x00 tabletype expr in the
// table section when init is set). body is the slice r started on, for offsets.
func readTable(r *reader, body []byte, init bool) (tableType, error) {
	var t tableType
	b, err := r.byte()
	if err != nil {
		return t, err
	}
	hasInit := init && b == 0x40
	if hasInit {
		if _, err = r.byte(); err != nil { // reserved 0x00
			return t, err
		}
		if b, err = r.byte(); err != nil {
			return t, err
		}
	}
	if b == 0x63 || b == 0x64 { // (ref null ht), (ref ht): a heap type follows
		if _, err = r.u64(); err != nil {
			return t, err
		}
	}
	t.start = len(body) - len(r.b)
	flags, err := r.byte()
	if err != nil {
		return t, err
	}
	if flags > 1 {
		return t, fmt.Errorf("table limits flags 0x%02x (a shared or 64-bit table) are not supported", flags)
	}
	if t.min, err = r.u64(); err != nil {
		return t, err
	}
	if t.hasMax = flags == 1; t.hasMax {
		if t.max, err = r.u64(); err != nil {
			return t, err
		}
	}
	t.end = len(body) - len(r.b)
	if hasInit {
		err = skipConstExpr(r)
	}
	return t, err
}

// skipConstExpr reads a table's initializer: a constant expression of
// ref.null, ref.func, global.get and the integer constants, up to its end.
func skipConstExpr(r *reader) error {
	for {
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0xd0, 0xd2, 0x23, 0x41, 0x42: // ref.null ht, ref.func f, global.get g, i32.const, i64.const: one LEB128 each
			_, err = r.u64()
		default:
			err = fmt.Errorf("a table initializer uses opcode 0x%02x, which rowcall does not read", op)
		}
		if err != nil {
			return err
		}
	}
}

// readTables reads the table section.
func (info *Info) readTables(r *reader, body []byte) ([]tableType, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	var out []tableType
	for i := uint32(0); i < n; i++ {
		t, err := readTable(r, body, true)
		if err != nil {
			return nil, fmt.Errorf("table %d: %w", i, err)
		}
		info.TableEntries += t.min
		out = append(out, t)
	}
	return out, nil
}

// checkTables refuses tables that start larger than MaxTableEntries.
func (info Info) checkTables() error {
	if info.TableEntries <= MaxTableEntries {
		return nil
	}
	return &rowcall.Error{
		Code:     CodeInvalid,
		Message:  fmt.Sprintf("module declares %d table entries; the sandbox allows %d (modules.MaxTableEntries) in all its tables together", info.TableEntries, MaxTableEntries),
		HowToFix: "a table holds one entry per function called indirectly: drop unused code (wasm-opt --remove-unused-module-elements), or split the module",
	}
}

// BoundTables returns wasm with every table's maximum lowered so that all of
// them together can never hold more than MaxTableEntries: each table may grow
// by an equal share of what their initial sizes leave (a table with no maximum,
// the way Go writes it, gets one). A module with no table comes back as is.
// Imported tables need no bound: the sandbox exports none, so a module that
// imports one is refused (see [Info.Forbidden]). The runner compiles what this
// returns; the registry keeps, and digests, the bytes it was given. info is
// what Inspect returned for wasm, without an error.
func BoundTables(wasm []byte, info Info) ([]byte, error) {
	if err := info.checkTables(); err != nil {
		return nil, err
	}
	r := reader{b: wasm[8:]}
	for !r.done() {
		at := len(wasm) - len(r.b)
		id, _ := r.byte()
		size, _ := r.u32()
		body, _ := r.take(int(size)) // Inspect read the framing
		if id != 4 {
			continue
		}
		var scratch Info
		s := reader{b: body}
		tables, err := scratch.readTables(&s, body)
		if err != nil {
			return nil, malformed(fmt.Errorf("section 4: %w", err))
		}
		share := (MaxTableEntries - info.TableEntries) / uint64(max(len(tables), 1))
		var nb []byte
		from := 0
		for _, t := range tables {
			limit := t.min + share
			if t.hasMax && t.max <= limit {
				continue
			}
			nb = append(nb, body[from:t.start]...)
			nb = append(binary.AppendUvarint(append(nb, 1), t.min), binary.AppendUvarint(nil, limit)...)
			from = t.end
		}
		if nb == nil {
			return wasm, nil
		}
		nb = append(nb, body[from:]...)
		out := append([]byte(nil), wasm[:at]...)
		out = binary.AppendUvarint(append(out, 4), uint64(len(nb)))
		out = append(append(out, nb...), r.b...)
		return out, nil
	}
	return wasm, nil
}
