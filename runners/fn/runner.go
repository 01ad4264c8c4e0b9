package fn

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Source is where the runner finds modules; *modules.Registry is one.
type Source interface {
	Resolve(ctx context.Context, target string) (modules.Module, error)
	Bytes(ctx context.Context, m modules.Module) ([]byte, error)
}

// Config holds the sandbox limits and the cache settings. Zero values take the
// defaults.
type Config struct {
	CacheDir         string           // on-disk compilation cache; "" keeps it in memory only
	Timeout          time.Duration    // wall-clock limit per call; default 5s
	MemoryLimitPages uint32           // linear memory limit in 64 KiB pages; default 1024 (64 MiB)
	OutputLimit      int              // stdout bytes; default 1 MiB
	StderrTail       int              // bytes of stderr quoted in a failure; default 512
	MaxCompiled      int              // compiled modules kept in memory; default 64
	Interpreter      bool             // force wazero's interpreter (what the worker runs)
	Fuel             int64            // > 0: meter modules, this many loop iterations a call (package runners/fn/fuel); the worker's time limit
	Now              func() time.Time // the guest's wall clock; default time.Now
	MaxConcurrent    int              // instances running at once; default 4×GOMAXPROCS
	QueueWait        time.Duration    // how long a call waits for one to finish before ERR:fn:busy; default 1s
	CompileTimeout   time.Duration    // how long one module may take to compile; default 2m
}

// The defaults.
const (
	DefaultTimeout          = 5 * time.Second
	DefaultMemoryLimitPages = 1024
	DefaultOutputLimit      = 1 << 20
	DefaultStderrTail       = 512
	DefaultMaxCompiled      = 64
	DefaultFuel             = 10_000_000 // loop iterations: 0.8 s of wazero's interpreter natively, 3.3 s in the worker
	DefaultTemplate         = `["$1"]`
	DefaultQueueWait        = time.Second
	DefaultCompileTimeout   = 2 * time.Minute
	// MaxCompiling is how many modules a runner compiles at once; more wait
	// their turn. With the code bounds of package modules, it bounds the
	// memory compiling takes.
	MaxCompiling = 2
)

// DefaultMaxConcurrent is 4×GOMAXPROCS: enough to keep every core busy while
// some calls sleep, and a bound on what hostile calls can hold at once (each up
// to MemoryLimitPages of memory and modules.MaxTableEntries table entries).
func DefaultMaxConcurrent() int { return 4 * runtime.GOMAXPROCS(0) }

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MemoryLimitPages == 0 {
		c.MemoryLimitPages = DefaultMemoryLimitPages
	}
	c.MemoryLimitPages = min(c.MemoryLimitPages, 65536)
	if c.OutputLimit <= 0 {
		c.OutputLimit = DefaultOutputLimit
	}
	if c.StderrTail <= 0 {
		c.StderrTail = DefaultStderrTail
	}
	if c.MaxCompiled <= 0 {
		c.MaxCompiled = DefaultMaxCompiled
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = DefaultMaxConcurrent()
	}
	if c.QueueWait <= 0 {
		c.QueueWait = DefaultQueueWait
	}
	if c.CompileTimeout <= 0 {
		c.CompileTimeout = DefaultCompileTimeout
	}
	return c
}

var (
	_ rowcall.Runner   = (*Runner)(nil)
	_ modules.Compiler = (*Runner)(nil)
	_ Source           = (*modules.Registry)(nil)
)

// Runner runs fn rows. Create it with New; it is safe for concurrent use.
type Runner struct {
	src       Source
	cfg       Config
	rt        wazero.Runtime
	cache     wazero.CompilationCache
	mods      *compiledCache
	base      wazero.ModuleConfig
	slots     chan struct{}   // one token per running instance, Config.MaxConcurrent of them
	compiling chan struct{}   // one token per module being compiled, MaxCompiling of them
	closed    context.Context // done once Close has begun: compiles under way stop at their next function
	close     context.CancelFunc
	closeOnce sync.Once

	compiles, instances atomic.Int64 // Counts'
}

// Counts reports how many modules this runner has compiled (a compile from
// the on-disk cache counts) and how many instances it has started.
func (r *Runner) Counts() (compiles, instances int64) { return r.compiles.Load(), r.instances.Load() }

// Plan is what shape mode returns: the module that would run and its argv.
type Plan struct {
	Module string   `json:"module"`
	Digest string   `json:"digest"`
	Argv   []string `json:"argv"`
}

// New returns a runner over src with one wazero runtime. When src is a
// *modules.Registry (anything with SetCompiler), New makes the runner its
// Compiler, so registration compiles and links in this runtime and the host
// keeps a single one.
func New(ctx context.Context, src Source, cfg Config) (*Runner, error) {
	cfg = cfg.withDefaults()
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("fn: compilation cache in %s: %w", cfg.CacheDir, err)
		}
		cache = c
	} else {
		cache = wazero.NewCompilationCache()
	}
	rc := wazero.NewRuntimeConfig() // the compiler where wazero has one, else the interpreter
	if cfg.Interpreter {
		rc = wazero.NewRuntimeConfigInterpreter()
	}
	rc = rc.WithCompilationCache(cache).WithCloseOnContextDone(true)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("fn: instantiate WASI: %w", err)
	}
	r := &Runner{src: src, cfg: cfg, rt: rt, cache: cache, mods: newCompiledCache(cfg.MaxCompiled),
		slots: make(chan struct{}, cfg.MaxConcurrent), compiling: make(chan struct{}, MaxCompiling)}
	r.closed, r.close = context.WithCancel(context.Background())
	r.base = r.baseConfig()
	if s, ok := src.(interface{ SetCompiler(modules.Compiler) }); ok {
		s.SetCompiler(r)
	}
	return r, nil
}

// Close releases the runtime and the compiled modules. It first stops the
// compiles under way, a deadline's abandoned ones included, and waits for them:
// wazero's runtime must not close under a compile.
func (r *Runner) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.close()
		for range MaxCompiling {
			r.compiling <- struct{}{}
		}
	})
	err := r.rt.Close(ctx)
	if cerr := r.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// Digest returns the SHA-256 digest (hex) of the module that target resolves to,
// for the dispatcher to fold into the row's contract fingerprint.
func (r *Runner) Digest(ctx context.Context, target string) (string, error) {
	m, err := r.src.Resolve(ctx, strings.TrimSpace(target))
	return m.Digest, err
}

// module resolves target, or trusts the digest the dispatcher already resolved
// it to (the contract fingerprint covers that digest).
func (r *Runner) module(ctx context.Context, target, digest string) (modules.Module, error) {
	if digest != "" {
		if name, _, err := modules.ParseTarget(target); err == nil {
			return modules.Module{Name: name, Digest: digest}, nil
		}
	}
	return r.src.Resolve(ctx, target)
}

// Run calls the module that inv.Row's target names with the arguments its
// content template renders. In shape mode it resolves and renders, and returns
// a Plan, with Result SHAPE:fn:<module> <n> args (as the other runners'
// SHAPE: lines), without running anything.
func (r *Runner) Run(ctx context.Context, inv *rowcall.Invocation) rowcall.Output {
	if inv.Row == nil {
		return rowcall.Fail("fn", "unknown_target", "").Output()
	}
	target := strings.TrimSpace(inv.Row.Target)
	m, err := r.module(ctx, target, inv.Module)
	if err != nil {
		if ctx.Err() != nil {
			return rowcall.Fail("fn", "canceled").Output()
		}
		return resolveFailure(target, err).Output()
	}
	argv, fail := Argv(m.Name, inv)
	if fail != nil {
		return fail.Output()
	}
	if inv.Shape {
		return rowcall.Output{Result: fmt.Sprintf("SHAPE:fn:%s %d args", m.Name, len(argv)-1), Plan: Plan{Module: m.Name, Digest: m.Digest, Argv: argv}}
	}
	c, err := r.mods.acquire(ctx, m.Digest, func() ([]byte, error) { return r.src.Bytes(ctx, m) }, r.compile)
	if err != nil {
		return loadFailure(m, err).Output()
	}
	defer r.mods.release(c)
	leave, fail := r.enter(ctx)
	if fail != nil {
		return fail.Output()
	}
	defer leave()
	return r.exec(ctx, c, argv)
}

// enter takes one of the Config.MaxConcurrent slots for a call, waiting at most
// Config.QueueWait for a running one to finish; fail is the call's result when
// none did (ERR:fn:busy) or its caller gave up first.
func (r *Runner) enter(ctx context.Context) (leave func(), fail *rowcall.Failure) {
	leave = func() { <-r.slots }
	select {
	case r.slots <- struct{}{}:
		return leave, nil
	default:
	}
	wait := time.NewTimer(r.cfg.QueueWait)
	defer wait.Stop()
	select {
	case r.slots <- struct{}{}:
		return leave, nil
	case <-wait.C:
		return nil, rowcall.Fail("fn", "busy", fmt.Sprintf("%d calls running, none finished within %v", cap(r.slots), r.cfg.QueueWait))
	case <-ctx.Done():
		return nil, callerGaveUp(ctx)
	}
}

// resolveFailure turns a registry error into the row's result.
func resolveFailure(target string, err error) *rowcall.Failure {
	var re *rowcall.Error
	errors.As(err, &re)
	switch rowcall.ErrorCode(err) {
	case rowcall.ENotFound, modules.CodeBadTarget:
		return rowcall.Fail("fn", "unknown_target", target)
	case modules.CodeDigestMismatch:
		return rowcall.Fail("fn", "digest_mismatch", fmt.Sprintf("sha256:%v!=sha256:%v", re.Extra["pinned"], re.Extra["current"]))
	}
	return rowcall.Fail("fn", "registry", oneLine(err.Error()))
}

func loadFailure(m modules.Module, err error) *rowcall.Failure {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return rowcall.Fail("fn", "canceled")
	}
	if rowcall.ErrorCode(err) == modules.CodeBlobMissing {
		return rowcall.Fail("fn", "module_unavailable", oneLine(err.Error()))
	}
	return rowcall.Fail("fn", "compile", m.Name+" "+oneLine(err.Error()))
}

// oneLine is the first line of an error message.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
