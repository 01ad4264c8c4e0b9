package fn_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/wasm/examples"
)

// TestHostileModules: each attack gives its own clear ERR, within bounds, and
// the very next call on the same runner succeeds.
func TestHostileModules(t *testing.T) {
	cfg := fn.Config{Timeout: time.Second, MemoryLimitPages: 256, OutputLimit: 100_000}
	for _, interp := range []bool{false, true} {
		cfg.Interpreter = interp
		r, _ := newRunner(t, cfg)
		tests := []struct {
			module, want string
		}{
			{"loop", "ERR:fn:timeout:1s"},
			{"sleep", "ERR:fn:timeout:1s"},
			{"grow", "ERR:fn:memory_limit:256"},
			{"flood", "ERR:fn:output_limit:100000"},
			{"trap", "ERR:fn:trap:unreachable:trap: reaching unreachable on purpose"},
			{"exit", "ERR:fn:exit:3:exit: failing on purpose with code 3"},
		}
		for _, tt := range tests {
			name := tt.module
			if interp {
				name += "/interpreter"
			}
			t.Run(name, func(t *testing.T) {
				start := time.Now()
				out := call(r, tt.module, "", "")
				if out.Result != tt.want || !out.Material {
					t.Fatalf("result %q (material %v); want %q", out.Result, out.Material, tt.want)
				}
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("took %v; the limits should stop it well within 3s", d)
				}
				if out := call(r, "echo", "", "still serving"); out.Result != "still serving" {
					t.Fatalf("the next call: %q", out.Result)
				}
			})
		}
	}
}

// TestRefusedAtRegistration: modules the sandbox cannot run are refused by Put,
// with the runner as the registry's compiler, naming what is wrong.
func TestRefusedAtRegistration(t *testing.T) {
	r, reg := newRunner(t, fn.Config{Timeout: 300 * time.Millisecond})
	_ = r
	tests := []struct {
		module string
		code   rowcall.Code
		says   string
	}{
		{"forbidden", modules.CodeForbiddenImport, "module imports env.foo, which the rowcall sandbox does not offer"},
		{"notwasm", modules.CodeNotWasm, "not WebAssembly"},
		{"reactor", modules.CodeNotCommand, "exports no _start"},
		{"badsig", modules.CodeInvalid, "does not link against the rowcall sandbox"},
		{"bigmem", modules.CodeInvalid, "declares 2048 initial pages of memory (128 MiB); the sandbox allows 1024 pages (64 MiB)"},
		{"startloop", modules.CodeInvalid, "start section failed when instantiated: ERR:fn:timeout:300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.module, func(t *testing.T) {
			_, err := reg.Put(ctx, tt.module, examples.Hostile()[tt.module])
			if rowcall.ErrorCode(err) != tt.code || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("Put: %v; want code %s saying %q", err, tt.code, tt.says)
			}
			if out := call(r, tt.module, "", ""); out.Result != "ERR:fn:unknown_target:"+tt.module {
				t.Fatalf("a refused module runs: %q", out.Result)
			}
		})
	}
}

// TestMemoryDeclaredOverLimit: a module registered under a larger limit and run
// under a smaller one is stopped before it starts.
func TestMemoryDeclaredOverLimit(t *testing.T) {
	r, reg := newRunner(t, fn.Config{MemoryLimitPages: 4096})
	if _, err := reg.Put(ctx, "bigmem", examples.Hostile()["bigmem"]); err != nil {
		t.Fatal(err)
	}
	small, err := fn.New(ctx, reg, fn.Config{MemoryLimitPages: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close(ctx)
	want := "ERR:fn:memory_limit:1024:the module declares 2048 initial pages of memory"
	if out := call(small, "bigmem", "", ""); out.Result != want {
		t.Fatalf("result %q; want %q", out.Result, want)
	}
	if out := call(r, "bigmem", "", ""); out.Result != "" {
		t.Fatalf("under the larger limit: %q", out.Result)
	}
}

func TestCallerCancellation(t *testing.T) {
	r, _ := newRunner(t, fn.Config{Timeout: 10 * time.Second})
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want string
	}{
		{"caller deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 100*time.Millisecond)
		}, "ERR:fn:timeout:caller_deadline"},
		{"caller cancel", func() (context.Context, context.CancelFunc) {
			c, cancel := context.WithCancel(ctx)
			time.AfterFunc(100*time.Millisecond, cancel)
			return c, cancel
		}, "ERR:fn:canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			if out := callCtx(c, r, "loop", "", ""); out.Result != tt.want {
				t.Fatalf("result %q; want %q", out.Result, tt.want)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatal("the loop outlived its caller")
			}
		})
	}
}

// TestProbe runs a Go module that tries everything a program might: it sees
// its arguments, a real clock, sleep and randomness, and nothing else.
func TestProbe(t *testing.T) {
	t.Setenv("ROWCALL_SECRET", "must-not-leak")
	reg := openRegistry(t)
	r, err := fn.New(ctx, reg, fn.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	if _, err := reg.Put(ctx, "probe", goExample(t, "hostile/probe")); err != nil {
		t.Fatal(err)
	}
	type report struct {
		Args       []string `json:"args"`
		Env        []string `json:"env"`
		ReadFile   string   `json:"read_file"`
		ReadDir    string   `json:"read_dir"`
		WriteFile  string   `json:"write_file"`
		Stdin      string   `json:"stdin"`
		StdinBytes int      `json:"stdin_bytes"`
		Dial       string   `json:"dial"`
		Random     string   `json:"random"`
		RandomHex  string   `json:"random_hex"`
		Unix       int64    `json:"unix"`
		SleptMS    int64    `json:"slept_ms"`
	}
	var runs []report
	for range 2 {
		out := call(r, "probe", `["$1", "$2"]`, "one|two")
		var rep report
		if err := json.Unmarshal([]byte(out.Result), &rep); err != nil {
			t.Fatalf("probe: %q: %v", out.Result, err)
		}
		runs = append(runs, rep)
	}
	rep := runs[0]
	checks := []struct {
		what string
		ok   bool
	}{
		{"argv is [probe one two]", strings.Join(rep.Args, " ") == "probe one two"},
		{"no environment", len(rep.Env) == 0},
		{"no file to read", rep.ReadFile != "ok"},
		{"no directory to list", rep.ReadDir != "ok"},
		{"no file to write", rep.WriteFile != "ok"},
		{"stdin is empty", rep.Stdin == "ok" && rep.StdinBytes == 0},
		{"no network", rep.Dial != "ok"},
		{"randomness works", rep.Random == "ok" && len(rep.RandomHex) == 32},
		{"randomness is not the same every call", rep.RandomHex != runs[1].RandomHex},
		{"the wall clock is real", abs(rep.Unix-time.Now().Unix()) < 60},
		{"sleep sleeps", rep.SleptMS >= 20},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %+v", c.what, rep)
		}
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestFuel: with fuel (the worker's time limit, where a deadline cannot
// interrupt a module), every example module answers as it does without — C,
// AssemblyScript, WAT and Go compilers' output all metered — a module that
// loops forever stops with ERR:fn:timeout naming its budget, fast, long before
// the wall-clock limit, and the next call answers; a start section that loops
// is refused at registration.
func TestFuel(t *testing.T) {
	for _, interp := range []bool{false, true} {
		r, reg := newRunner(t, fn.Config{Fuel: fn.DefaultFuel, Interpreter: interp, Timeout: time.Minute})
		addGo(t, reg)
		tests := []struct{ target, content, body, want string }{
			{"echo", `["$1","$2"]`, "hello|world", "hello world"},
			{"upper", whole, "hello wörld|ok", "HELLO WÖRLD|OK"},
			{"last_reply_of", whole, "x [REPLY] Hi | there! [/REPLY] bye", "Hi | there!"},
			{"loop", "", "", "ERR:fn:timeout:10000000 loop iterations"},
			{"echo", "", "still serving", "still serving"},
		}
		for _, tt := range tests {
			start := time.Now()
			if out := call(r, tt.target, tt.content, tt.body); out.Result != tt.want {
				t.Fatalf("interpreter %v, %s: %q, want %q", interp, tt.target, out.Result, tt.want)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("interpreter %v, %s took %v", interp, tt.target, d)
			} else {
				t.Logf("interpreter %v, %s: %v", interp, tt.target, d.Round(time.Millisecond))
			}
		}
		now := call(r, "now", "", "")
		if now.Failed() || !strings.Contains(now.Result, `"iso"`) {
			t.Fatalf("now, metered: %q", now.Result)
		}
		_, err := reg.Put(ctx, "startloop", examples.Hostile()["startloop"])
		var e *rowcall.Error
		if !errors.As(err, &e) || e.Code != modules.CodeInvalid || !strings.Contains(e.Message, "start section failed") {
			t.Fatalf("startloop, metered: %v", err)
		}
	}
}

// storedSource is a registry whose bytes for one module are whatever the
// store holds, as for a module stored before the code bounds existed or
// written to the bucket directly: the runner must check them itself.
type storedSource struct {
	*modules.Registry
	name string
	wasm []byte
}

func (s storedSource) Bytes(ctx context.Context, m modules.Module) ([]byte, error) {
	if m.Name == s.name {
		return s.wasm, nil
	}
	return s.Registry.Bytes(ctx, m)
}

// TestRunChecksCodeBounds: the runner refuses to compile stored bytes past a
// code bound, with the compiler (host) and the interpreter (worker) alike.
func TestRunChecksCodeBounds(t *testing.T) {
	for _, interp := range []bool{false, true} {
		reg := openRegistry(t)
		echo, _ := examples.ByName("echo")
		if _, err := reg.Put(ctx, "stored", echo.Wasm); err != nil {
			t.Fatal(err)
		}
		r, err := fn.New(ctx, storedSource{reg, "stored", examples.Costly("locals", 50_000_000)}, fn.Config{Interpreter: interp})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close(ctx)
		start := time.Now()
		out := call(r, "stored", "", "")
		if !strings.HasPrefix(out.Result, "ERR:fn:compile:stored module_too_complex:locals") {
			t.Fatalf("interpreter %v: %q", interp, out.Result)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("interpreter %v: refused after %v", interp, took)
		}
	}
}

// TestCompileDeadline: a module within the code bounds that takes longer than
// Config.CompileTimeout to compile is refused with module_too_complex:compile_time
// well before its compile would have finished, and is not stored; the runner
// registers the next module normally.
func TestCompileDeadline(t *testing.T) {
	reg := openRegistry(t)
	r, err := fn.New(ctx, reg, fn.Config{CompileTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	// 100,000 functions of the deepest nesting that fits 8 MiB: minutes of
	// wazero's compiler.
	deep := append(append([]byte{0}, strings.Repeat("\x02\x40", 40)...), strings.Repeat("\x0b", 41)...)
	slow := examples.Generated(min((modules.MaxSize-1000)/(len(deep)+2), modules.MaxFunctions), deep)
	start := time.Now()
	_, err = reg.Put(ctx, "slow", slow)
	if rowcall.ErrorCode(err) != modules.CodeTooComplex || !strings.HasPrefix(err.Error(), "module_too_complex:compile_time: ") {
		t.Fatalf("Put: %v", err)
	}
	if took := time.Since(start); took > 30*time.Second { // a minute or more to compile
		t.Errorf("refused after %v", took)
	}
	if _, err := reg.Get(ctx, "slow"); rowcall.ErrorCode(err) != rowcall.ENotFound {
		t.Fatalf("the refused module was stored: %v", err)
	}
	echo, _ := examples.ByName("echo")
	if _, err := reg.Put(ctx, "echo", echo.Wasm); err != nil {
		t.Fatal(err)
	}
	if out := call(r, "echo", whole, "still here"); out.Result != "still here" {
		t.Fatalf("echo: %q", out.Result)
	}
}
