package modules_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func TestTableEntries(t *testing.T) {
	for module, want := range map[string]uint64{"now": 5, "echo": 0, "tablegrow": 1, "bigtable": 2_000_000} {
		info, err := modules.Inspect(example(module))
		if err != nil {
			t.Fatal(err)
		}
		if info.TableEntries != want {
			t.Errorf("%s: %d table entries; want %d", module, info.TableEntries, want)
		}
	}
}

// TestBoundTables: a table with no maximum gets MaxTableEntries, one whose
// maximum is lower keeps its bytes, one that starts over is refused, and the
// bounded module still compiles and runs.
func TestBoundTables(t *testing.T) {
	for _, module := range []string{"now", "echo"} {
		if b, err := boundTables(example(module)); err != nil || !bytes.Equal(b, example(module)) {
			t.Errorf("%s: bounded to %d bytes (%v); want its bytes as they are", module, len(b), err)
		}
	}
	if _, err := boundTables(example("bigtable")); err == nil {
		t.Error("bigtable bounded; want it refused")
	}
	b, err := boundTables(example("tablegrow"))
	if err != nil || bytes.Equal(b, example("tablegrow")) {
		t.Fatalf("tablegrow: %v; want its table's maximum set", err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var out bytes.Buffer
	_, err = rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig().WithStdout(&out))
	if err != nil || out.String() != "big:refused small:ok\n" {
		t.Fatalf("bounded tablegrow: %q, %v", out.String(), err)
	}
}

// boundTables is Inspect, then BoundTables, as the fn runner calls them.
func boundTables(wasm []byte) ([]byte, error) {
	info, err := modules.Inspect(wasm)
	if err != nil {
		return nil, err
	}
	return modules.BoundTables(wasm, info)
}
