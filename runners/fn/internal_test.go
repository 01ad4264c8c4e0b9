package fn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/wasm/examples"
)

// memSource is a Source over a map, counting reads of module bytes.
type memSource struct {
	mods  map[string][]byte
	reads atomic.Int64
}

func (s *memSource) Resolve(_ context.Context, target string) (modules.Module, error) {
	b, ok := s.mods[target]
	if !ok {
		return modules.Module{}, rowcall.Errorf(rowcall.ENotFound, "no module %s", target)
	}
	sum := sha256.Sum256(b)
	return modules.Module{Name: target, Digest: hex.EncodeToString(sum[:]), Size: int64(len(b))}, nil
}

func (s *memSource) Bytes(_ context.Context, m modules.Module) ([]byte, error) {
	s.reads.Add(1)
	return s.mods[m.Name], nil
}

func run(r *Runner, target, body string) rowcall.Output {
	row := rowcall.NewRow("T", rowcall.TypeFn)
	row.Target, row.Content = target, `["$1+"]`
	return r.Run(context.Background(), &rowcall.Invocation{Row: &row, Body: body})
}

// TestCompiledOnce: 50 concurrent first calls compile the module once.
func TestCompiledOnce(t *testing.T) {
	src := &memSource{mods: map[string][]byte{"now": wasmOf("now")}}
	r, err := New(context.Background(), src, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out := run(r, "now", ""); !strings.HasPrefix(out.Result, `{"now"`) {
				t.Errorf("now: %q", out.Result)
			}
		}()
	}
	wg.Wait()
	if n := src.reads.Load(); n != 1 {
		t.Fatalf("module bytes read %d times; want once", n)
	}
}

// TestEviction: beyond MaxCompiled the least recently used module is dropped
// and recompiled when called again.
// len reports how many modules are cached.
func (c *compiledCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func TestEviction(t *testing.T) {
	h := examples.Hostile()
	src := &memSource{mods: map[string][]byte{"echo": wasmOf("echo"), "trap": h["trap"], "exit": h["exit"]}}
	r, err := New(context.Background(), src, Config{MaxCompiled: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	for _, name := range []string{"echo", "trap", "exit", "echo"} {
		run(r, name, "x")
	}
	if n := r.mods.len(); n != 2 {
		t.Errorf("%d modules cached; want MaxCompiled = 2", n)
	}
	if n := src.reads.Load(); n != 4 {
		t.Errorf("%d compiles; want 4 (echo again after its eviction)", n)
	}
	if out := run(r, "echo", "ok"); out.Result != "ok" {
		t.Fatalf("after eviction: %q", out.Result)
	}
}

// TestDiskCache: with CacheDir, compiled code lands on disk and a second
// runtime (a restarted host) uses it.
func TestDiskCache(t *testing.T) {
	dir := t.TempDir()
	src := &memSource{mods: map[string][]byte{"now": wasmOf("now")}}
	for i := range 2 {
		r, err := New(context.Background(), src, Config{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if out := run(r, "now", ""); !strings.HasPrefix(out.Result, `{"now"`) {
			t.Fatalf("run %d: %q", i, out.Result)
		}
		r.Close(context.Background())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) == 0 {
		t.Fatal("nothing written to the compilation cache directory")
	}
}

func TestTailWriter(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		max    int
		want   string
	}{
		{"short", []string{"boom\n"}, 8, "boom"},
		{"keeps the end", []string{"0123456789", "abcdef"}, 8, "89abcdef"},
		{"one huge write", []string{strings.Repeat("x", 100) + "END"}, 4, "xEND"},
		{"many writes", strings.Split(strings.Repeat("ab", 500), ""), 6, "ababab"},
		{"cut inside a character", []string{"ééé"}, 5, "éé"},
		{"invalid UTF-8", []string{"a\xffb"}, 8, "a\uFFFDb"},
		{"nothing", nil, 8, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tailWriter{max: tt.max}
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := w.tail(); got != tt.want {
				t.Fatalf("tail = %q; want %q", got, tt.want)
			}
			if len(w.buf) > 2*tt.max {
				t.Fatalf("kept %d bytes for a %d-byte tail", len(w.buf), tt.max)
			}
		})
	}
}

func TestCapWriter(t *testing.T) {
	canceled := false
	w := capWriter{limit: 10, cancel: func() { canceled = true }}
	if n, err := w.Write([]byte("0123456789")); n != 10 || err != nil {
		t.Fatalf("Write to the limit = %d, %v", n, err)
	}
	if _, err := w.Write([]byte("x")); err == nil || !w.over || !canceled {
		t.Fatalf("a write past the limit: err %v, over %v, canceled %v", err, w.over, canceled)
	}
	if w.String() != "0123456789" {
		t.Fatalf("kept %q", w.String())
	}
}

func wasmOf(name string) []byte {
	e, _ := examples.ByName(name)
	return e.Wasm
}
