//go:build js && wasm

package main

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"sync"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/modules"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/syumai/workers/cloudflare/r2"
)

// lazyFn is the fn runner, built on first use: modules registered in D1's
// modules table, their bytes in the R2 bucket bound as MODULES (or, without
// that binding, in D1's module_blobs table), run by wazero's interpreter (the
// only wazero engine on GOARCH=wasm) with the same ABI and limits as the host.
// syumai's worker.mjs runs main for every request, so a wazero runtime is made
// only for the requests that run or register a module.
type lazyFn struct {
	ctx  context.Context
	reg  *modules.Registry
	once sync.Once
	r    *fn.Runner
	err  error
}

func newLazyFn(ctx context.Context, db *sql.DB) *lazyFn {
	var blobs modules.BlobStore = modules.NewSQLBlobs(db)
	if bucket, err := r2.NewBucket("MODULES"); err == nil {
		blobs = r2Blobs{bucket: bucket}
	}
	return &lazyFn{ctx: ctx, reg: modules.NewRegistry(db, blobs)}
}

// runner builds the fn runner once; it makes itself the registry's compiler,
// so registration compiles and links modules in the same sandbox.
func (l *lazyFn) runner() (*fn.Runner, error) {
	l.once.Do(func() { l.r, l.err = fn.New(l.ctx, l.reg, fn.Config{Interpreter: true}) })
	return l.r, l.err
}

// Run runs an fn row.
func (l *lazyFn) Run(ctx context.Context, inv *rowcall.Invocation) rowcall.Output {
	r, err := l.runner()
	if err != nil {
		return rowcall.Output{Result: "ERR:fn:module_unavailable:" + strings.ReplaceAll(err.Error(), ":", " ")}
	}
	return r.Run(ctx, inv)
}

// Digest resolves the module an fn row's target names (for the contract
// fingerprint) without a wazero runtime.
func (l *lazyFn) Digest(ctx context.Context, target string) (string, error) {
	m, err := l.reg.Resolve(ctx, strings.TrimSpace(target))
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
