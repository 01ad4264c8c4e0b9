// Package fuel meters WebAssembly modules for runtimes where a call cannot be
// interrupted from outside: Go on js/wasm (rowcall's worker) has one thread
// and no preemption, so a context deadline never gets to fire while wazero
// runs a module. Meter rewrites a module so that every loop iteration takes
// fuel from a counter the module carries, and a loop entered with none left
// traps. It reads the binary format itself (sections, function bodies and
// every instruction's immediates), with no dependency. Scan uses the same
// reader to measure one function body (its locals, nesting and br_table
// sizes), for the module registry's bounds on code.
package fuel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Export is the global a metered module exports: the loop iterations it has
// left (0 once it trapped for want of fuel).
const Export = "rowcall:fuel"

// Meter returns wasm with a fuel counter: a new mutable i64 global, starting
// at fuel and exported as Export, is decremented at the top of every loop, and
// a loop entered with none left traps (unreachable). Every loop is metered, so
// every way to run forever is (a recursion ends at the call stack's limit).
// The module's own indexes do not move: the global comes after every other,
// and nothing is imported.
func Meter(wasm []byte, fuel int64) ([]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, errors.New("fuel: not a WebAssembly binary")
	}
	var secs []section
	for r := (reader{b: wasm, i: 8}); r.i < len(r.b); {
		id := r.byte()
		size := int(r.u32())
		if r.err != nil || r.i+size > len(r.b) {
			return nil, errors.New("fuel: a section runs past the end of the module")
		}
		secs = append(secs, section{id: id, body: r.b[r.i : r.i+size]})
		r.i += size
	}
	global, err := fuelIndex(secs)
	if err != nil {
		return nil, err
	}
	entry := append([]byte{0x7e, 0x01, 0x42}, sleb(fuel)...) // mut i64 = i64.const fuel
	entry = append(entry, 0x0b)
	export := append(name(Export), 0x03) // kind global
	export = append(export, uleb(uint64(global))...)
	check := loopCheck(global)

	out := append([]byte(nil), wasm[:8]...)
	added := map[byte]bool{}
	add := func(id byte, body []byte) {
		out = append(out, id)
		out = append(out, uleb(uint64(len(body)))...)
		out = append(out, body...)
	}
	for _, s := range secs {
		// A missing global or export section goes where its id's order puts it.
		for _, missing := range []struct {
			id    byte
			entry []byte
		}{{secGlobal, entry}, {secExport, export}} {
			if !added[missing.id] && s.id != secCustom && order(s.id) > order(missing.id) {
				add(missing.id, append([]byte{1}, missing.entry...))
				added[missing.id] = true
			}
		}
		switch s.id {
		case secGlobal, secExport:
			body, err := appendEntry(s.body, map[byte][]byte{secGlobal: entry, secExport: export}[s.id])
			if err != nil {
				return nil, err
			}
			add(s.id, body)
			added[s.id] = true
		case secCode:
			body, err := meterCode(s.body, check)
			if err != nil {
				return nil, err
			}
			add(s.id, body)
		default:
			add(s.id, s.body)
		}
	}
	for _, id := range []byte{secGlobal, secExport} {
		if !added[id] {
			add(id, append([]byte{1}, map[byte][]byte{secGlobal: entry, secExport: export}[id]...))
		}
	}
	return out, nil
}

// Section ids.
const (
	secCustom = 0
	secImport = 2
	secGlobal = 6
	secExport = 7
	secCode   = 10
)

type section struct {
	id   byte
	body []byte
}

// order is a section id's place in a module (data count, 12, comes before code).
func order(id byte) int {
	if id == 12 {
		return 95
	}
	return int(id) * 10
}

// fuelIndex is the new global's index: after the imported and defined ones.
func fuelIndex(secs []section) (uint32, error) {
	var n uint32
	for _, s := range secs {
		r := reader{b: s.body}
		switch s.id {
		case secImport:
			for count := r.u32(); count > 0 && r.err == nil; count-- {
				r.name()
				r.name()
				switch kind := r.byte(); kind {
				case 0x00: // func: type index
					r.u32()
				case 0x01: // table: reftype, limits
					r.byte()
					r.limits()
				case 0x02: // memory: limits
					r.limits()
				case 0x03: // global: valtype, mutability
					r.byte()
					r.byte()
					n++
				default:
					return 0, fmt.Errorf("fuel: unknown import kind 0x%02x", kind)
				}
			}
		case secGlobal:
			n += r.u32()
		}
		if r.err != nil {
			return 0, r.err
		}
	}
	return n, nil
}

// appendEntry adds one entry to a section that is a vector.
func appendEntry(body, entry []byte) ([]byte, error) {
	r := reader{b: body}
	count := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	out := append(uleb(uint64(count)+1), body[r.i:]...)
	return append(out, entry...), nil
}

// loopCheck is what starts every loop: trap when no fuel is left, else take one.
func loopCheck(global uint32) []byte {
	g := uleb(uint64(global))
	var b []byte
	b = append(append(append(b, 0x23), g...), 0x50)             // global.get; i64.eqz
	b = append(b, 0x04, 0x40, 0x00, 0x0b)                       // if; unreachable; end
	b = append(append(append(b, 0x23), g...), 0x42, 0x7f, 0x7c) // global.get; i64.const -1; i64.add
	return append(append(b, 0x24), g...)                        // global.set
}

// meterCode rewrites every function body of the code section.
func meterCode(body []byte, check []byte) ([]byte, error) {
	r := reader{b: body}
	count := r.u32()
	out := uleb(uint64(count))
	for ; count > 0 && r.err == nil; count-- {
		size := int(r.u32())
		if r.err != nil || r.i+size > len(r.b) {
			return nil, errors.New("fuel: a function body runs past the code section")
		}
		fn, err := meterBody(r.b[r.i:r.i+size], check)
		if err != nil {
			return nil, err
		}
		r.i += size
		out = append(append(out, uleb(uint64(len(fn)))...), fn...)
	}
	return out, r.err
}

// meterBody copies one function body, inserting check after every loop's
// block type.
func meterBody(body []byte, check []byte) ([]byte, error) {
	var out []byte
	_, err := walk(body, func(r *reader, op byte, start int) {
		if out == nil {
			out = append(make([]byte, 0, len(body)+64), body[:start]...) // the local declarations
		}
		out = append(out, r.b[start:r.i]...)
		if op == 0x03 { // loop
			out = append(out, check...)
		}
	})
	if out == nil && err == nil {
		out = append([]byte(nil), body...) // declarations and no instruction
	}
	return out, err
}

// Shape is what Scan reads from one function body: the numbers that make a
// body expensive to compile however few bytes it has.
type Shape struct {
	Locals  uint64 // locals its declarations add up to (at most 2^32 groups of 2^32-1: the sum cannot overflow)
	Depth   int    // deepest nesting of block, loop and if
	Targets uint64 // labels of its largest br_table
}

// Scan reads one function body (a code section entry without its size): its
// local declarations and every instruction. It reads each byte once and
// allocates nothing, so it is cheap for any body; an error means the body is
// malformed or uses an instruction Meter cannot read.
func Scan(body []byte) (Shape, error) {
	var s Shape
	depth := 0
	locals, err := walk(body, func(r *reader, op byte, start int) {
		switch op {
		case 0x02, 0x03, 0x04: // block, loop, if
			depth++
			s.Depth = max(s.Depth, depth)
		case 0x0b: // end
			depth--
		case 0x0e: // br_table: the label count is its first immediate
			n, _ := binary.Uvarint(r.b[start+1 : r.i])
			s.Targets = max(s.Targets, n)
		}
	})
	s.Locals = locals
	return s, err
}

// walk reads body's local declarations, returning how many locals they
// declare, then each instruction, calling visit with r just past it and start
// at its opcode.
func walk(body []byte, visit func(r *reader, op byte, start int)) (locals uint64, err error) {
	r := reader{b: body}
	for groups := r.u32(); groups > 0 && r.err == nil; groups-- {
		locals += uint64(r.u32())
		r.byte() // value type
	}
	for r.i < len(r.b) && r.err == nil {
		start := r.i
		op := r.byte()
		if err := r.skipImmediates(op); err != nil {
			return locals, err
		}
		visit(&r, op, start)
	}
	return locals, r.err
}

// skipImmediates reads past op's immediates (the core spec with bulk memory,
// reference types, non-trapping conversions, sign extension, SIMD and tail
// calls: what wazero runs).
func (r *reader) skipImmediates(op byte) error {
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if: block type
		if b := r.peek(); b == 0x40 || (b >= 0x6f && b <= 0x7f) {
			r.i++
		} else {
			r.sleb()
		}
	case op == 0x0c || op == 0x0d || op == 0x10 || op == 0x12 || (op >= 0x20 && op <= 0x26) || op == 0xd2:
		r.u32() // br, br_if, call, return_call, local.*, global.*, table.get/set, ref.func
	case op == 0x0e: // br_table
		for n := r.u32(); n > 0 && r.err == nil; n-- {
			r.u32()
		}
		r.u32()
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
		r.u32()
		r.u32()
	case op == 0x1c: // select t*
		r.i += int(r.u32())
	case op >= 0x28 && op <= 0x3e: // loads and stores: memarg
		r.u32()
		r.u32()
	case op == 0x3f || op == 0x40 || op == 0xd0: // memory.size, memory.grow, ref.null
		r.i++
	case op == 0x41:
		r.sleb()
	case op == 0x42:
		r.sleb()
	case op == 0x43:
		r.i += 4
	case op == 0x44:
		r.i += 8
	case op == 0xfc:
		switch sub := r.u32(); {
		case sub <= 7: // saturating conversions
		case sub == 8: // memory.init
			r.u32()
			r.i++
		case sub == 10: // memory.copy
			r.i += 2
		case sub == 11: // memory.fill
			r.i++
		case sub == 12 || sub == 14: // table.init, table.copy
			r.u32()
			r.u32()
		case sub == 9 || sub == 13 || sub == 15 || sub == 16 || sub == 17:
			r.u32()
		default:
			return fmt.Errorf("fuel: unknown instruction 0xfc %d", sub)
		}
	case op == 0xfd:
		switch sub := r.u32(); {
		case sub <= 11 || sub == 92 || sub == 93: // loads, stores, load zero: memarg
			r.u32()
			r.u32()
		case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
			r.i += 16
		case sub >= 21 && sub <= 34: // extract and replace lane
			r.i++
		case sub >= 84 && sub <= 91: // load and store lane: memarg, lane
			r.u32()
			r.u32()
			r.i++
		}
	case op <= 0x01 || op == 0x05 || op == 0x0b || op == 0x0f || op == 0x1a || op == 0x1b || (op >= 0x45 && op <= 0xc4) || op == 0xd1:
		// no immediates
	default:
		return fmt.Errorf("fuel: unknown instruction 0x%02x", op)
	}
	if r.i > len(r.b) {
		r.err = errors.New("fuel: an instruction runs past the end of its function")
	}
	return r.err
}

// reader reads a module's encodings; the first error sticks.
type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) peek() byte {
	if r.i >= len(r.b) {
		r.err = errors.New("fuel: unexpected end of the module")
		return 0
	}
	return r.b[r.i]
}

func (r *reader) byte() byte {
	b := r.peek()
	r.i++
	return b
}

func (r *reader) u32() uint32 {
	v, n := binary.Uvarint(r.b[min(r.i, len(r.b)):])
	if n <= 0 || v > 1<<32-1 {
		r.err = errors.New("fuel: a malformed number")
		return 0
	}
	r.i += n
	return uint32(v)
}

func (r *reader) sleb() {
	for r.err == nil && r.byte()&0x80 != 0 {
	}
}

func (r *reader) name() { r.i += int(r.u32()) }

func (r *reader) limits() {
	flags := r.byte()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}

func uleb(v uint64) []byte { return binary.AppendUvarint(nil, v) }

func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func name(s string) []byte { return append(uleb(uint64(len(s))), s...) }
