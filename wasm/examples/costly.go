package examples

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Costly builds a module that is small to send and expensive to compile, the
// way the registry's code bounds are tested (runners/fn/modules/limits.go). It
// is a WASI command with one exported _start and n as the size of its one
// costly dimension:
//
//	locals     one function declaring n i32 locals (n = 50,000,000 is 41 bytes)
//	nesting    one function with n blocks nested in each other
//	br_table   one function with a br_table of n labels
//	body_size  one function of n bytes (nops)
//	functions  n empty functions
func Costly(what string, n int) []byte {
	var body []byte
	funcs := 1
	switch what {
	case "locals":
		body = binary.AppendUvarint([]byte{1}, uint64(n))
		body = append(body, 0x7f, 0x0b) // i32; end
	case "nesting":
		body = append(append([]byte{0}, bytes.Repeat([]byte{0x02, 0x40}, n)...), bytes.Repeat([]byte{0x0b}, n+1)...)
	case "br_table":
		body = binary.AppendUvarint([]byte{0, 0x02, 0x40, 0x41, 0x00, 0x0e}, uint64(n)) // block; i32.const 0; br_table
		body = append(append(body, make([]byte, n+1)...), 0x0b, 0x0b)                   // n+1 labels, all 0; end; end
	case "body_size":
		body = append(append([]byte{0}, bytes.Repeat([]byte{0x01}, max(n-2, 0))...), 0x0b)
	case "functions":
		body, funcs = []byte{0, 0x0b}, n
	default:
		panic(fmt.Sprintf("examples: no costly module %q", what))
	}
	return Generated(funcs, body)
}

// Generated returns a WASI command of funcs functions of type () -> (), each
// with body (a code section entry without its size), the first exported as
// _start.
func Generated(funcs int, body []byte) []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	section := func(id byte, b []byte) {
		out = append(binary.AppendUvarint(append(out, id), uint64(len(b))), b...)
	}
	section(1, []byte{1, 0x60, 0, 0})                                                    // one type: () -> ()
	section(3, append(binary.AppendUvarint(nil, uint64(funcs)), make([]byte, funcs)...)) // every function of type 0
	section(7, append([]byte{1, 6}, append([]byte("_start"), 0, 0)...))                  // export func 0 as _start
	entry := append(binary.AppendUvarint(nil, uint64(len(body))), body...)
	section(10, append(binary.AppendUvarint(nil, uint64(funcs)), bytes.Repeat(entry, funcs)...))
	return out
}
