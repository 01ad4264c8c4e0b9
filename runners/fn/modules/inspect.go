package modules

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/rowcall/rowcall"
)

// Info is what Inspect reads from a module's binary without compiling it.
type Info struct {
	Imports   []Import
	Exports   []string // export names, in order
	MemoryMin uint64   // initial pages of the module's memory (declared or imported); 0 when it has none
	// TableEntries is the initial entries of all the module's tables together
	// (declared or imported); see MaxTableEntries.
	TableEntries uint64
}

// Import is one import of a module.
type Import struct {
	Module string
	Name   string
	Kind   string // "func", "table", "memory", "global" or "tag"
}

// String is module.name, the way error messages name an import.
func (i Import) String() string { return i.Module + "." + i.Name }

// WASIModule is the only module a rowcall guest may import from.
const WASIModule = "wasi_snapshot_preview1"

// AllowedImports are the function names a module may import from
// wasi_snapshot_preview1: all of WASI preview 1, which the sandbox implements
// with wazero. What they can reach is decided by the sandbox, not by the list:
// arguments, clocks, random, stdout and stderr; stdin is empty, the environment
// is empty, no directory is preopened (so every path_* and most fd_* calls fail
// with EBADF), and no socket exists. See wasm/ABI.md.
var AllowedImports = []string{
	"args_get", "args_sizes_get", "environ_get", "environ_sizes_get",
	"clock_res_get", "clock_time_get",
	"fd_advise", "fd_allocate", "fd_close", "fd_datasync", "fd_fdstat_get",
	"fd_fdstat_set_flags", "fd_fdstat_set_rights", "fd_filestat_get",
	"fd_filestat_set_size", "fd_filestat_set_times", "fd_pread", "fd_prestat_get",
	"fd_prestat_dir_name", "fd_pwrite", "fd_read", "fd_readdir", "fd_renumber",
	"fd_seek", "fd_sync", "fd_tell", "fd_write",
	"path_create_directory", "path_filestat_get", "path_filestat_set_times",
	"path_link", "path_open", "path_readlink", "path_remove_directory",
	"path_rename", "path_symlink", "path_unlink_file",
	"poll_oneoff", "proc_exit", "proc_raise", "sched_yield", "random_get",
	"sock_accept", "sock_recv", "sock_send", "sock_shutdown",
}

var allowed = func() map[string]bool {
	m := make(map[string]bool, len(AllowedImports))
	for _, n := range AllowedImports {
		m[n] = true
	}
	return m
}()

// Allowed reports whether the sandbox offers the import.
func (i Import) Allowed() bool {
	return i.Module == WASIModule && i.Kind == "func" && allowed[i.Name]
}

var (
	wasmMagic     = []byte("\x00asm")
	coreVersion   = []byte{1, 0, 0, 0}
	errTruncated  = errors.New("unexpected end of the module")
	errLEBTooLong = errors.New("integer encoding too long")
)

// Inspect reads the imports, exports, memory size and table sizes of a
// WebAssembly binary. It checks the framing (magic, version, section sizes)
// and reads every function body's instructions, refusing a module past the
// bounds on its code (MaxFunctions and the others) with CodeTooComplex; the
// compiler checks the rest. Any other failure is a *rowcall.Error with code
// CodeNotWasm. It runs wherever module bytes meet a compiler: registration,
// and the fn runner before every compile.
func Inspect(wasm []byte) (Info, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], wasmMagic) {
		return Info{}, notWasm("these bytes are not WebAssembly (a .wasm file starts with \\0asm)",
			"upload the compiled .wasm file, not its source or a text (.wat) file; see wasm/ABI.md for each language's build command")
	}
	if !bytes.Equal(wasm[4:8], coreVersion) {
		return Info{}, notWasm(fmt.Sprintf("these bytes are a WebAssembly component or an unknown version (% x), not a core module", wasm[4:8]),
			"rowcall runs core WASI preview 1 commands: build for wasm32-wasip1 (wasm32-wasi), not wasm32-wasip2 or a component")
	}
	var info Info
	r := reader{b: wasm[8:]}
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return Info{}, malformed(err)
		}
		size, err := r.u32()
		if err != nil {
			return Info{}, malformed(err)
		}
		body, err := r.take(int(size))
		if err != nil {
			return Info{}, malformed(fmt.Errorf("section %d: %w", id, err))
		}
		s := reader{b: body}
		switch id {
		case 2:
			err = info.readImports(&s)
		case 4:
			_, err = info.readTables(&s, body)
		case 5:
			err = info.readMemories(&s)
		case 7:
			err = info.readExports(&s)
		case 10:
			err = readCode(&s)
		}
		var re *rowcall.Error
		if errors.As(err, &re) {
			return Info{}, err
		}
		if err != nil {
			return Info{}, malformed(fmt.Errorf("section %d: %w", id, err))
		}
	}
	return info, nil
}

// Forbidden returns the imports the sandbox does not offer.
func (info Info) Forbidden() []Import {
	var out []Import
	for _, imp := range info.Imports {
		if !imp.Allowed() {
			out = append(out, imp)
		}
	}
	return out
}

// Exported reports whether the module exports name.
func (info Info) Exported(name string) bool {
	for _, e := range info.Exports {
		if e == name {
			return true
		}
	}
	return false
}

// check applies the registry's rules to an inspected module.
func (info Info) check() error {
	if bad := info.Forbidden(); len(bad) > 0 {
		names := make([]string, len(bad))
		for i, imp := range bad {
			names[i] = imp.String()
			if imp.Kind != "func" {
				names[i] += " (a " + imp.Kind + ")"
			}
		}
		return &rowcall.Error{
			Code:    CodeForbiddenImport,
			Message: "module imports " + strings.Join(names, ", ") + ", which the rowcall sandbox does not offer; a module may import only wasi_snapshot_preview1 functions (arguments, clocks, random, stdout/stderr, proc_exit)",
			HowToFix: "build a WASI preview 1 command (wasm32-wasip1) that needs no host-specific imports: drop the code that uses " + names[0] +
				", or pass what it provided as an argument; see wasm/ABI.md",
			Extra: map[string]any{"imports": names},
		}
	}
	if err := info.checkTables(); err != nil {
		return err
	}
	if !info.Exported("_start") {
		return &rowcall.Error{
			Code:     CodeNotCommand,
			Message:  "module exports no _start function, so it is not a WASI command",
			HowToFix: "rowcall runs commands (a program with a main function): build an executable for wasm32-wasip1, not a library or reactor; see wasm/ABI.md",
		}
	}
	return nil
}

func (info *Info) readImports(r *reader) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		mod, err := r.name()
		if err != nil {
			return err
		}
		name, err := r.name()
		if err != nil {
			return err
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		imp := Import{Module: mod, Name: name}
		switch kind {
		case 0: // func: type index
			imp.Kind = "func"
			_, err = r.u32()
		case 1: // table: reference type, limits
			imp.Kind = "table"
			var t tableType
			t, err = readTable(r, nil, false)
			info.TableEntries += t.min
		case 2: // memory: limits
			imp.Kind = "memory"
			var min uint64
			if min, err = r.limits(); err == nil && info.MemoryMin == 0 {
				info.MemoryMin = min
			}
		case 3: // global: value type, mutability
			imp.Kind = "global"
			_, err = r.take(2)
		case 4: // tag: attribute, type index
			imp.Kind = "tag"
			if _, err = r.byte(); err == nil {
				_, err = r.u32()
			}
		default:
			return fmt.Errorf("import %s.%s has unknown kind 0x%02x", mod, name, kind)
		}
		if err != nil {
			return err
		}
		info.Imports = append(info.Imports, imp)
	}
	return nil
}

func (info *Info) readMemories(r *reader) error {
	n, err := r.u32()
	if err != nil || n == 0 {
		return err
	}
	min, err := r.limits()
	if err == nil && info.MemoryMin == 0 {
		info.MemoryMin = min
	}
	return err
}

func (info *Info) readExports(r *reader) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		name, err := r.name()
		if err != nil {
			return err
		}
		if _, err := r.byte(); err != nil { // kind
			return err
		}
		if _, err := r.u32(); err != nil { // index
			return err
		}
		info.Exports = append(info.Exports, name)
	}
	return nil
}

// reader reads the binary format's primitives, never past its slice.
type reader struct{ b []byte }

func (r *reader) done() bool { return len(r.b) == 0 }

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b) {
		return nil, errTruncated
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out, nil
}

func (r *reader) byte() (byte, error) {
	b, err := r.take(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (r *reader) u64() (uint64, error) {
	v, n := binary.Uvarint(r.b) // LEB128 unsigned is the same encoding
	if n == 0 {
		return 0, errTruncated
	}
	if n < 0 || n > 10 {
		return 0, errLEBTooLong
	}
	r.b = r.b[n:]
	return v, nil
}

func (r *reader) u32() (uint32, error) {
	v, err := r.u64()
	if err == nil && v > 1<<32-1 {
		err = errLEBTooLong
	}
	return uint32(v), err
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.take(int(n))
	return string(b), err
}

// limits reads a table or memory limits and returns the minimum.
func (r *reader) limits() (uint64, error) {
	flags, err := r.byte()
	if err != nil {
		return 0, err
	}
	min, err := r.u64()
	if err != nil {
		return 0, err
	}
	if flags&1 != 0 {
		_, err = r.u64()
	}
	return min, err
}

func notWasm(msg, fix string) error {
	return &rowcall.Error{Code: CodeNotWasm, Message: msg, HowToFix: fix}
}

func malformed(err error) error {
	return notWasm("these bytes are not a well-formed WebAssembly module: "+err.Error(),
		"upload the complete .wasm file as the request body (application/wasm or application/octet-stream); a truncated upload looks like this")
}
