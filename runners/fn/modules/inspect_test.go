package modules_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/wasm/examples"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func example(name string) []byte {
	for _, e := range examples.All() {
		if e.Name == name {
			return e.Wasm
		}
	}
	return examples.Hostile()[name]
}

func TestInspect(t *testing.T) {
	tests := []struct {
		module    string
		imports   []string
		memoryMin uint64
		start     bool
	}{
		{"echo", []string{"wasi_snapshot_preview1.args_sizes_get", "wasi_snapshot_preview1.args_get", "wasi_snapshot_preview1.fd_write"}, 1, true},
		{"now", []string{"wasi_snapshot_preview1.clock_time_get", "wasi_snapshot_preview1.fd_close", "wasi_snapshot_preview1.fd_fdstat_get",
			"wasi_snapshot_preview1.fd_seek", "wasi_snapshot_preview1.fd_write", "wasi_snapshot_preview1.proc_exit"}, 2, true},
		{"forbidden", []string{"env.foo"}, 1, true},
		{"reactor", nil, 1, false},
		{"loop", nil, 1, true},
		{"bigmem", nil, 2048, true},
	}
	for _, tt := range tests {
		t.Run(tt.module, func(t *testing.T) {
			info, err := modules.Inspect(example(tt.module))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, imp := range info.Imports {
				got = append(got, imp.String())
			}
			if !slices.Equal(got, tt.imports) {
				t.Errorf("imports %v; want %v", got, tt.imports)
			}
			if info.MemoryMin != tt.memoryMin {
				t.Errorf("memory min %d; want %d", info.MemoryMin, tt.memoryMin)
			}
			if info.Exported("_start") != tt.start {
				t.Errorf("exports %v; _start wanted %v", info.Exports, tt.start)
			}
		})
	}
}

func TestInspectRefusesWhatIsNotWasm(t *testing.T) {
	echo := example("echo")
	tests := []struct {
		name string
		b    []byte
		msg  string
	}{
		{"shell script", example("notwasm"), "not WebAssembly"},
		{"wat text", []byte("(module)"), "not WebAssembly"},
		{"too short", []byte("\x00as"), "not WebAssembly"},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), "component"},
		{"truncated", echo[:len(echo)/2], "not a well-formed"},
		{"bad section size", []byte("\x00asm\x01\x00\x00\x00\x02\xff\xff\xff\xff\x0f"), "not a well-formed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := modules.Inspect(tt.b)
			re := wantCode(t, err, modules.CodeNotWasm)
			if !strings.Contains(re.Message, tt.msg) {
				t.Errorf("message %q; want it to say %q", re.Message, tt.msg)
			}
		})
	}
}

// FuzzInspect: no input makes Inspect or BoundTables panic.
func FuzzInspect(f *testing.F) {
	for _, b := range examples.Hostile() {
		f.Add(b)
	}
	f.Add(example("now"))
	for _, what := range []string{"locals", "nesting", "br_table", "body_size", "functions"} {
		f.Add(examples.Costly(what, 3))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		boundTables(b)
	})
}

// TestAllowedImportsAreWazeros: the allow-list is exactly what wazero's
// wasi_snapshot_preview1 implements, so nothing allowed fails to link.
func TestAllowedImportsAreWazeros(t *testing.T) {
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	cm, err := wasi_snapshot_preview1.NewBuilder(rt).Compile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for name := range cm.ExportedFunctions() {
		have = append(have, name)
	}
	slices.Sort(have)
	want := slices.Clone(modules.AllowedImports)
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Errorf("wazero exports %v\nAllowedImports   %v", have, want)
	}
}
