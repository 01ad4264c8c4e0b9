package fn

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/fuel"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

// baseConfig is the part of every instance's configuration that never changes:
// anonymous (so any number run at once), no start function run by
// instantiation (exec calls _start itself), real clocks, crypto randomness. No
// filesystem, environment or stdin is configured, so there are none.
func (r *Runner) baseConfig() wazero.ModuleConfig {
	now := r.cfg.Now
	return wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithWalltime(func() (int64, int32) {
			t := now()
			return t.Unix(), int32(t.Nanosecond())
		}, sys.ClockResolution(time.Microsecond)).
		WithSysNanotime().
		WithRandSource(rand.Reader)
}

// call is one instance's sandbox state: its limits, its output, and what
// happened.
type call struct {
	cfg    *Config
	stdout capWriter
	stderr tailWriter
	mem    memoryLimit
}

func newCall(cfg *Config, cancel context.CancelFunc) *call {
	c := &call{cfg: cfg}
	c.stdout = capWriter{limit: cfg.OutputLimit, cancel: cancel}
	c.stderr = tailWriter{max: cfg.StderrTail}
	c.mem = memoryLimit{limit: uint64(cfg.MemoryLimitPages) * 65536}
	return c
}

// moduleConfig adds the per-call parts: argv, the writers, and a sleep that
// the call's deadline cuts short.
func (c *call) moduleConfig(base wazero.ModuleConfig, ctx context.Context, argv []string) wazero.ModuleConfig {
	return base.WithArgs(argv...).
		WithStdout(&c.stdout).
		WithStderr(&c.stderr).
		WithNanosleep(func(ns int64) {
			t := time.NewTimer(time.Duration(ns))
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		})
}

// exec instantiates c fresh and runs its _start under the limits.
func (r *Runner) exec(ctx context.Context, c *compiled, argv []string) rowcall.Output {
	if c.memMin > uint64(r.cfg.MemoryLimitPages) {
		return rowcall.Fail("fn", "memory_limit", strconv.Itoa(int(r.cfg.MemoryLimitPages)), fmt.Sprintf("the module declares %d initial pages of memory", c.memMin)).Output()
	}
	callCtx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	s := newCall(&r.cfg, cancel)
	r.instances.Add(1)
	mod, err := r.rt.InstantiateModule(experimental.WithMemoryAllocator(callCtx, &s.mem), c.cm, s.moduleConfig(r.base, callCtx, argv))
	if err != nil {
		f, ran := s.failure(ctx, callCtx, err)
		if !ran {
			f = rowcall.Fail("fn", "instantiate", oneLine(err.Error()))
		}
		out := f.Output()
		out.Material = ran
		return out
	}
	defer mod.Close(context.Background())
	start := mod.ExportedFunction("_start")
	if start == nil {
		return rowcall.Fail("fn", "instantiate", "the module exports no _start; it is not a WASI command (see wasm/ABI.md)").Output()
	}
	_, err = start.Call(callCtx)
	var exit *sys.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 0 {
		err = nil
	}
	if err == nil && (s.stdout.over || callCtx.Err() != nil) {
		err = callCtx.Err() // cut short (a sleep, a refused write) though it returned
	}
	if err != nil {
		if r.outOfFuel(mod) {
			out := rowcall.Fail("fn", "timeout", fmt.Sprintf("%d loop iterations", r.cfg.Fuel)).Output()
			out.Material = true
			return out
		}
		f, _ := s.failure(ctx, callCtx, err)
		out := f.Output()
		out.Material = true
		return out
	}
	return rowcall.Output{Result: trimNewline(s.stdout.String()), Material: true}
}

// outOfFuel reports whether a metered module stopped for want of fuel.
func (r *Runner) outOfFuel(mod api.Module) bool {
	if r.cfg.Fuel <= 0 {
		return false
	}
	g := mod.ExportedGlobal(fuel.Export)
	return g != nil && g.Get() == 0
}

// failure names a failed instance: output and memory limits first (they are
// why a module fails after hitting them), then the exit code or the trap.
// ran is false for an error that is not the module's doing (a link error).
func (s *call) failure(parent, callCtx context.Context, err error) (f *rowcall.Failure, ran bool) {
	var exit *sys.ExitError
	isExit := errors.As(err, &exit)
	kind, detail := "", ""
	switch {
	case s.stdout.over:
		kind, detail = "output_limit", strconv.Itoa(s.cfg.OutputLimit)
	case s.mem.refused.Load():
		kind, detail = "memory_limit", strconv.Itoa(int(s.cfg.MemoryLimitPages))
	case callCtx.Err() != nil && parent.Err() != nil:
		return callerGaveUp(parent), true
	case callCtx.Err() != nil, isExit && exit.ExitCode() == sys.ExitCodeDeadlineExceeded:
		kind, detail = "timeout", s.cfg.Timeout.String()
	case isExit:
		kind, detail = "exit", strconv.FormatUint(uint64(exit.ExitCode()), 10)
	case strings.Contains(err.Error(), "wasm error: "), err.Error() == stackOverflow:
		kind, detail = "trap", trapMessage(err)
	default:
		return rowcall.Fail("fn", "instantiate", oneLine(err.Error())), false
	}
	f = rowcall.Fail("fn", kind, detail)
	if tail := s.stderr.tail(); tail != "" {
		f.Args = append(f.Args, tail)
	}
	return f, true
}

// callerGaveUp names why the caller's context ended: its deadline or its
// cancellation.
func callerGaveUp(parent context.Context) *rowcall.Failure {
	if errors.Is(parent.Err(), context.DeadlineExceeded) {
		return rowcall.Fail("fn", "timeout", "caller_deadline")
	}
	return rowcall.Fail("fn", "canceled")
}

// stackOverflow is the whole error wazero's compiler returns when a module
// exhausts its call stack (wasmruntime.ErrRuntimeStackOverflow, which it does
// not wrap as a "wasm error: " trap, unlike its interpreter).
const stackOverflow = "stack overflow"

// trapMessage is wazero's trap message without its prefix or stack trace,
// with no ':' (so the stderr tail after it can be found).
func trapMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "wasm error: "); i >= 0 {
		msg = msg[i+len("wasm error: "):]
	}
	return strings.ReplaceAll(strings.TrimSpace(oneLine(msg)), ":", ";")
}

func trimNewline(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

var errOutputLimit = errors.New("fn: output limit reached")

// capWriter keeps stdout up to limit bytes. The first write past the limit
// cancels the call, so a module that ignores write errors still stops.
type capWriter struct {
	buf    strings.Builder
	limit  int
	over   bool
	cancel context.CancelFunc
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.over {
		return 0, errOutputLimit
	}
	if w.buf.Len()+len(p) > w.limit {
		w.over = true
		w.cancel()
		return 0, errOutputLimit
	}
	return w.buf.Write(p)
}

func (w *capWriter) String() string { return w.buf.String() }

// tailWriter keeps the last max bytes written to it, in bounded memory.
type tailWriter struct {
	buf []byte
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > w.max {
		p = p[len(p)-w.max:]
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
	}
	return n, nil
}

// tail is the last max bytes, trimmed, starting on a whole UTF-8 character.
func (w *tailWriter) tail() string {
	b := w.buf
	if len(b) > w.max {
		b = b[len(b)-w.max:]
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
}

// memoryLimit backs an instance's linear memory (wazero's experimental
// MemoryAllocator) and refuses to grow it past limit bytes, remembering that it
// did: memory.grow then returns -1 to the module, and a failure that follows is
// reported as memory_limit rather than as the trap or exit it causes.
type memoryLimit struct {
	limit   uint64
	refused atomic.Bool
}

func (m *memoryLimit) Allocate(capacity, _ uint64) experimental.LinearMemory {
	return &linearMemory{owner: m, capacity: min(capacity, m.limit)}
}

type linearMemory struct {
	owner    *memoryLimit
	capacity uint64
	buf      []byte
}

// pooled keeps linear memories of small modules between calls: a fresh
// instance per call would otherwise allocate (and the GC reclaim) its memory
// every time. Its invariant: a pooled buffer is zero over its whole capacity,
// not only its length, so neither an instance's initial memory nor the pages
// memory.grow adds inside that capacity can show an earlier call's bytes.
// Free keeps it by clearing up to the high-water mark (memory never shrinks, so
// that is the buffer's length); make and append give zeroed capacity.
var pooled = sync.Pool{New: func() any { return new([]byte) }}

// poolMax is the largest memory returned to the pool.
const poolMax = 1 << 20

func (l *linearMemory) Reallocate(size uint64) []byte {
	if size > l.owner.limit {
		l.owner.refused.Store(true)
		return nil
	}
	switch {
	case l.buf == nil && size <= poolMax:
		p := pooled.Get().(*[]byte)
		if uint64(cap(*p)) < size {
			*p = make([]byte, size, max(size, min(l.capacity, poolMax)))
		}
		l.buf = (*p)[:size] // zero: see pooled
	case l.buf == nil:
		l.buf = make([]byte, size, max(size, l.capacity))
	case size <= uint64(cap(l.buf)):
		l.buf = l.buf[:size] // bytes past the old length were never exposed: still zero
	default:
		l.buf = append(l.buf, make([]byte, size-uint64(len(l.buf)))...)
	}
	return l.buf
}

func (l *linearMemory) Free() {
	if cap(l.buf) <= poolMax {
		clear(l.buf) // everything the module could have written
		b := l.buf[:0]
		pooled.Put(&b)
	}
	l.buf = nil
}
