package fuel

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
)

// Meter puts its global after imported and defined ones, and what it writes
// still compiles: a module importing a global and defining two (the new one is
// global 3, exported as Export), with a loop in a function.
func TestMeterIndexes(t *testing.T) {
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	mod := []byte("\x00asm\x01\x00\x00\x00")
	mod = append(mod, sec(1, 1, 0x60, 0, 0)...)                                                 // type 0: () -> ()
	mod = append(mod, sec(2, 1, 1, 'e', 1, 'g', 0x03, 0x7f, 0x00)...)                           // import e.g: global i32
	mod = append(mod, sec(3, 1, 0)...)                                                          // one function of type 0
	mod = append(mod, sec(6, 2, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x00, 0x41, 0x01, 0x0b)...) // two globals
	mod = append(mod, sec(10, 1, 5, 0, 0x03, 0x40, 0x0b, 0x0b)...)                              // body: loop end end
	if got, err := fuelIndex(mustSections(t, mod)); err != nil || got != 3 {
		t.Fatalf("fuel global index %d (%v), want 3", got, err)
	}
	metered, err := Meter(mod, 7)
	if err != nil {
		t.Fatal(err)
	}
	// Compiling validates the rewrite: the loop's global.get/global.set of
	// global 3 as a mutable i64, and the export of global 3.
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	if _, err := rt.CompileModule(context.Background(), metered); err != nil {
		t.Fatalf("metered module does not compile: %v", err)
	}
	if _, err := Meter(append(mod, 0x0a, 0x01), 7); err == nil {
		t.Fatal("a section running past the end was metered")
	}
}

func mustSections(t *testing.T, wasm []byte) []section {
	var secs []section
	for r := (reader{b: wasm, i: 8}); r.i < len(r.b); {
		id := r.byte()
		size := int(r.u32())
		secs = append(secs, section{id: id, body: r.b[r.i : r.i+size]})
		r.i += size
	}
	return secs
}
