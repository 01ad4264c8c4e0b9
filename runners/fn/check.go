package fn

import (
	"context"
	"errors"
	"fmt"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/fuel"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// compile compiles wasm into e, its tables bounded (modules.BoundTables).
func (r *Runner) compile(ctx context.Context, wasm []byte, e *compiled) error {
	info, err := modules.Inspect(wasm)
	if err != nil {
		return err
	}
	if wasm, err = modules.BoundTables(wasm, info); err != nil {
		return err
	}
	if r.cfg.Fuel > 0 {
		if wasm, err = fuel.Meter(wasm, r.cfg.Fuel); err != nil {
			return &rowcall.Error{Code: modules.CodeInvalid, Message: err.Error(),
				HowToFix: "this host meters fn modules and could not read this one's code; build it for WebAssembly 2.0 without exceptions or threads"}
		}
	}
	r.compiles.Add(1)
	cm, err := r.compileBounded(ctx, wasm)
	if err != nil {
		return err
	}
	e.cm, e.memMin = cm, info.MemoryMin
	return nil
}

// compileBounded compiles wasm on a goroutine of its own, at most MaxCompiling
// at a time, and gives up after Config.CompileTimeout. wazero's compiler
// notices the cancelled context only between two functions (and only with
// two or more workers, as here), and its decoder and interpreter not at all,
// so what one function costs is bounded by Inspect's code bounds
// (modules.MaxNesting and the others), and a compile given up on keeps its
// turn until wazero returns.
func (r *Runner) compileBounded(ctx context.Context, wasm []byte) (wazero.CompiledModule, error) {
	select {
	case r.compiling <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-r.closed.Done():
		return nil, errors.New("the fn runner is closed")
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.CompileTimeout)
	stop := context.AfterFunc(r.closed, cancel) // Close stops it at the next function too
	type result struct {
		cm  wazero.CompiledModule
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			stop()
			<-r.compiling
		}()
		// With more than one worker, wazero's compiler checks the context
		// between functions; with one it never does.
		cm, err := r.rt.CompileModule(experimental.WithCompilationWorkers(cctx, 2), wasm)
		done <- result{cm, err}
	}()
	select {
	case res := <-done:
		cancel()
		return res.cm, res.err
	case <-cctx.Done():
		cancel()
		go func() {
			if res := <-done; res.cm != nil {
				res.cm.Close(context.Background())
			}
		}()
		return nil, &rowcall.Error{
			Code:    modules.CodeTooComplex,
			Args:    []string{"compile_time"},
			Message: fmt.Sprintf("module did not compile within %s, the sandbox's compile deadline", r.cfg.CompileTimeout),
			HowToFix: "make the module smaller or simpler to compile: drop unused code (wasm-opt --remove-unused-module-elements), " +
				"split very large functions, or build with optimisation",
			Extra: map[string]any{"limit": "compile_time", "max": r.cfg.CompileTimeout.String()},
		}
	}
}

// Check implements modules.Compiler: it compiles wasm into the runner's cache,
// checks its declared memory against the limit, and instantiates it in the
// sandbox without calling _start, which links its imports and runs only a
// start section if the module has one (under the same limits as a call).
func (r *Runner) Check(ctx context.Context, digest string, wasm []byte) error {
	c, err := r.mods.acquire(ctx, digest, func() ([]byte, error) { return wasm, nil }, r.compile)
	if err != nil {
		return err
	}
	defer r.mods.release(c)
	if c.memMin > uint64(r.cfg.MemoryLimitPages) {
		return &rowcall.Error{
			Code: modules.CodeInvalid,
			Message: fmt.Sprintf("module declares %d initial pages of memory (%d MiB); the sandbox allows %d pages (%d MiB)",
				c.memMin, c.memMin/16, r.cfg.MemoryLimitPages, r.cfg.MemoryLimitPages/16),
			HowToFix: "lower the module's initial memory (for example wasm-ld --initial-memory, or a smaller static heap)",
		}
	}
	callCtx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	s := newCall(&r.cfg, cancel)
	r.instances.Add(1)
	mod, err := r.rt.InstantiateModule(experimental.WithMemoryAllocator(callCtx, &s.mem), c.cm, s.moduleConfig(r.base, callCtx, []string{"check"}))
	if err != nil {
		res, ran := s.failure(ctx, callCtx, err)
		msg := "module does not link against the rowcall sandbox: " + oneLine(err.Error())
		if ran {
			msg = "module's start section failed when instantiated: " + res.String()
		}
		return &rowcall.Error{Code: modules.CodeInvalid, Message: msg,
			HowToFix: "build a WASI preview 1 command whose imports match wasi_snapshot_preview1's signatures; see wasm/ABI.md"}
	}
	return mod.Close(ctx)
}
