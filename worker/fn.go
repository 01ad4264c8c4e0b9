//go:build js && wasm

package main

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/fn/modules"
)

// lazyFn is the fn runner, one per Go instance and built on first use:
// modules registered in D1's modules table, their bytes in the R2 bucket bound
// as MODULES (or, without that binding, in D1's module_blobs table), run by
// wazero's interpreter (the only wazero engine on GOARCH=wasm) with the same
// ABI and limits as the host. The runner keeps compiled modules by digest, and
// the instance outlives its requests, so a module is compiled once per
// isolate (at registration, or on its first call) and every later call
// instantiates the compiled code.
type lazyFn struct {
	src     *countingSource
	once    sync.Once
	started atomic.Bool
	r       *fn.Runner
	err     error
}

func newLazyFn(db *sql.DB) *lazyFn {
	reg := modules.NewRegistry(db, moduleBlobs{sql: modules.NewSQLBlobs(db)})
	return &lazyFn{src: &countingSource{Registry: reg, loads: map[string]int{}}}
}

// registry is the module registry the API serves.
func (l *lazyFn) registry() *modules.Registry { return l.src.Registry }

// runner builds the fn runner once; it makes itself the registry's compiler,
// so registration compiles and links modules in the same sandbox (and cache).
func (l *lazyFn) runner() (*fn.Runner, error) {
	l.once.Do(func() {
		l.r, l.err = fn.New(context.Background(), l.src, fn.Config{
			Interpreter: true,
			// Go on js/wasm cannot interrupt a running module, so the wall-clock
			// limit never fires here: fuel bounds every loop instead.
			Fuel: fn.DefaultFuel,
		})
		l.started.Store(l.err == nil)
	})
	return l.r, l.err
}

// Run runs an fn row.
func (l *lazyFn) Run(ctx context.Context, inv *rowcall.Invocation) rowcall.Output {
	r, err := l.runner()
	if err != nil {
		return rowcall.Fail("fn", "module_unavailable", strings.ReplaceAll(err.Error(), ":", " ")).Output()
	}
	return r.Run(ctx, inv)
}

// Digest resolves the module an fn row's target names (for the contract
// fingerprint) without a wazero runtime.
func (l *lazyFn) Digest(ctx context.Context, target string) (string, error) {
	m, err := l.src.Resolve(ctx, strings.TrimSpace(target))
	return m.Digest, err
}

// registering makes sure a module upload is checked by the fn runner itself
// (compiled and linked in its sandbox), as on the host.
func (l *lazyFn) registering(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/api/modules/") {
			if _, err := l.runner(); err != nil {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write(jsonObject("error", "internal", "message", "start the fn runner: "+err.Error()))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// countingSource is the registry as the fn runner's source, counting the
// module loads of the call path by digest. The runner reads a module's bytes
// only on a miss of its compiled-module cache, to compile them: so a load is
// a compile, and a warm call loads nothing (GET /_worker/stats shows the
// counts; test/worker_instance_test.go relies on them).
type countingSource struct {
	*modules.Registry
	mu    sync.Mutex
	loads map[string]int
}

func (s *countingSource) Bytes(ctx context.Context, m modules.Module) ([]byte, error) {
	s.mu.Lock()
	s.loads[m.Digest]++
	s.mu.Unlock()
	return s.Registry.Bytes(ctx, m)
}

// counts returns a copy of the load counts.
func (s *countingSource) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.loads))
	for k, v := range s.loads {
		out[k] = v
	}
	return out
}
