package examples

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestCommittedArtifactsReproduce rebuilds every committed module from source
// with build/modules.sh and compares the bytes. Without a toolchain it skips,
// unless CI is set: CI installs the toolchains first (build/modules.sh).
func TestCommittedArtifactsReproduce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with clang, asc and wat2wasm")
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../../build/modules.sh", "--no-install", "--no-go", "--out", out)
	msg, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 && os.Getenv("CI") == "" {
		t.Skipf("a toolchain is missing (run build/modules.sh to install it):\n%s", msg)
	}
	if err != nil {
		t.Fatalf("build/modules.sh: %v\n%s", err, msg)
	}
	committed, _ := filepath.Glob("*.wasm")
	hostile, _ := filepath.Glob("hostile/*.wasm")
	for _, f := range append(committed, hostile...) {
		if f == "hostile/notwasm.wasm" {
			continue // written by hand: it is not built
		}
		t.Run(f, func(t *testing.T) {
			want, _ := os.ReadFile(f)
			got, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatalf("not rebuilt: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("rebuilding %s gives %d bytes that differ from the committed %d: run build/modules.sh and commit the result", f, len(got), len(want))
			}
			if len(want) >= 100<<10 {
				t.Errorf("%s is %d bytes; committed artifacts stay under 100 KB", f, len(want))
			}
		})
	}
}

func TestAllAndBuiltin(t *testing.T) {
	langs := map[string]bool{}
	for _, e := range All() {
		langs[e.Lang] = true
		if _, err := os.Stat(e.Source); err != nil {
			t.Errorf("%s: source %s: %v", e.Name, e.Source, err)
		}
		if (e.Wasm == nil) != (e.Lang == "go") {
			t.Errorf("%s (%s): committed bytes %v; want them for every language but Go", e.Name, e.Lang, e.Wasm != nil)
		}
	}
	if len(langs) != 4 {
		t.Errorf("languages %v; want c, go, assemblyscript and wat", langs)
	}
	if len(Builtin()) != 3 {
		t.Errorf("Builtin() has %d modules; want the 3 committed ones", len(Builtin()))
	}
	for _, name := range []string{"loop", "sleep", "grow", "flood", "trap", "exit", "forbidden", "reactor", "notwasm", "badsig", "bigmem", "startloop", "regrow", "recurse", "tablegrow", "bigtable"} {
		if len(Hostile()[name]) == 0 {
			t.Errorf("Hostile()[%q] is missing", name)
		}
	}
}

func TestBuildGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	b, err := BuildGo(context.Background(), "last_reply_of")
	if errors.Is(err, ErrNoGo) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Fatalf("BuildGo returned %d bytes that are not Wasm", len(b))
	}
	if _, err := BuildGo(context.Background(), "nope"); err == nil {
		t.Fatal("BuildGo(nope) succeeded")
	}
}
