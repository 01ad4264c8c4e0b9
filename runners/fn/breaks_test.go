package fn_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/wasm/examples"
)

// The sandbox breaks docs/security.md bounds: memory left by an earlier call, tables that
// escape the memory limit, unbounded concurrency, and a stack overflow
// reported as a host problem.

// put registers hostile modules by name in reg.
func put(t testing.TB, reg *modules.Registry, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := reg.Put(ctx, name, examples.Hostile()[name]); err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
	}
}

// TestGrownMemoryIsZero: a module that grows its memory, reads the new pages
// and then writes a secret into them sees zeros on every call, though the
// runner reuses the buffer of the call before, which grew as far.
func TestGrownMemoryIsZero(t *testing.T) {
	for _, interp := range []bool{false, true} {
		r, reg := newRunner(t, fn.Config{Interpreter: interp})
		put(t, reg, "regrow")
		for i := range 10 {
			if out := call(r, "regrow", "", ""); out.Result != strings.Repeat("0", 64) {
				t.Fatalf("interpreter %v, call %d sees %q in its new pages; want 64 zeros", interp, i+1, out.Result)
			}
		}
	}
}

// TestStackOverflow: unbounded recursion is a trap, named as one, and the
// runner keeps serving.
func TestStackOverflow(t *testing.T) {
	for _, interp := range []bool{false, true} {
		r, reg := newRunner(t, fn.Config{Interpreter: interp})
		put(t, reg, "recurse")
		if out := call(r, "recurse", "", ""); out.Result != "ERR:fn:trap:stack overflow" || !out.Material {
			t.Fatalf("interpreter %v: %q (material %v); want ERR:fn:trap:stack overflow", interp, out.Result, out.Material)
		}
		if out := call(r, "echo", "", "still serving"); out.Result != "still serving" {
			t.Fatalf("the next call: %q", out.Result)
		}
	}
}

// TestTableBound: a table that declares no maximum (as Go's linker writes it)
// cannot grow past modules.MaxTableEntries, a small growth still works, and a
// module whose tables start larger than that is refused at registration.
func TestTableBound(t *testing.T) {
	for _, interp := range []bool{false, true} {
		r, reg := newRunner(t, fn.Config{Interpreter: interp})
		put(t, reg, "tablegrow")
		if out := call(r, "tablegrow", "", ""); out.Result != "big:refused small:ok" {
			t.Fatalf("interpreter %v: %q; want big:refused small:ok", interp, out.Result)
		}
		_, err := reg.Put(ctx, "bigtable", examples.Hostile()["bigtable"])
		want := "module declares 2000000 table entries; the sandbox allows 1048576"
		if rowcall.ErrorCode(err) != modules.CodeInvalid || !strings.Contains(err.Error(), want) {
			t.Fatalf("Put bigtable: %v; want %s saying %q", err, modules.CodeInvalid, want)
		}
		if out := call(r, "bigtable", "", ""); out.Result != "ERR:fn:unknown_target:bigtable" {
			t.Fatalf("a refused module runs: %q", out.Result)
		}
	}
}

// TestBusy: with every slot held by a module that sleeps, the next call waits
// Config.QueueWait and gets ERR:fn:busy; once a slot frees, calls run again.
func TestBusy(t *testing.T) {
	r, _ := newRunner(t, fn.Config{MaxConcurrent: 3, QueueWait: 100 * time.Millisecond, Timeout: 2 * time.Second})
	done := make(chan string, 3)
	for range 3 {
		go func() { done <- call(r, "sleep", "", "").Result }()
	}
	want := "ERR:fn:busy:3 calls running, none finished within 100ms"
	var got string
	for range 100 { // until the three sleepers hold every slot
		if got = call(r, "echo", "", "hi").Result; got == want {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got != want {
		t.Fatalf("with 3 sleepers running: %q; want %q", got, want)
	}
	for range 3 {
		if res := <-done; res != "ERR:fn:timeout:2s" {
			t.Fatalf("a sleeper: %q", res)
		}
	}
	if out := call(r, "echo", "", "free again"); out.Result != "free again" {
		t.Fatalf("after the sleepers: %q", out.Result)
	}
}

// hostileLoad keeps one goroutine per module calling it until stop is closed:
// a CPU loop, a memory bomb and a table bomb.
func hostileLoad(r *fn.Runner, stop chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, m := range []string{"loop", "grow", "tablegrow"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				call(r, m, "", "")
			}
		}()
	}
	return &wg
}

// TestNormalCallUnderAttack: while a CPU loop, a memory bomb and a table bomb
// run without pause, a normal call still gets a slot and answers well within
// a generous bound (the figure is BenchmarkCallUnderAttack's).
func TestNormalCallUnderAttack(t *testing.T) {
	r, reg := newRunner(t, fn.Config{MaxConcurrent: 4, Timeout: time.Second})
	put(t, reg, "tablegrow")
	stop := make(chan struct{})
	wg := hostileLoad(r, stop)
	defer wg.Wait()
	defer close(stop)
	time.Sleep(100 * time.Millisecond) // the attack under way
	for i := range 20 {
		start := time.Now()
		if out := call(r, "echo", "", "hi"); out.Result != "hi" {
			t.Fatalf("call %d under attack: %q", i+1, out.Result)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("call %d under attack took %v; want well under 1s", i+1, d)
		}
	}
}
