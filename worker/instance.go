//go:build js && wasm

package main

import (
	"context"
	"database/sql"
	"encoding/base64"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/vectors"
)

// One Go instance per isolate: the state it keeps between requests, and the
// handler it rebuilds only when the settings change.

// instance is what one Go instance keeps between requests.
type instance struct {
	number   int // the isolate's nth Go instance (from the shim): 1 unless one died
	started  time.Time
	requests atomic.Int64

	db      *sql.DB
	fn      *lazyFn
	fetcher http.RoundTripper

	mu  sync.Mutex
	app *served  // built from the settings the latest requests carried
	env js.Value // the env object app's settings were read from (compared, never used)

	settingsReads atomic.Int64
}

func newInstance() *instance {
	db := openD1()
	inst := &instance{started: time.Now(), db: db, fn: newLazyFn(db), fetcher: fetchTransport{}}
	if n := runtimeContext.Get("instance"); n.Type() == js.TypeNumber {
		inst.number = n.Int()
	}
	return inst
}

// ServeHTTP serves one request: the worker's own /_worker/ endpoints, or the API.
func (inst *instance) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	first := inst.requests.Add(1) == 1
	h, _ := handleFrom(r.Context())
	start := time.Now()
	a := inst.appFor(h)
	if first {
		// What the isolate's first request spends in Go beyond the program's
		// start (which the shim logs): the handler's wiring, and answering.
		built := time.Since(start)
		defer func() {
			slog.Info("rowcall: first request", "request", r.Method+" "+r.URL.Path,
				"handler_built", built.Round(time.Millisecond), "answered", time.Since(start).Round(time.Millisecond))
		}()
	}
	a.seeder.seed(r.Context())
	if strings.HasPrefix(r.URL.Path, "/_worker/") {
		// The worker's own endpoints take the API's body bound too.
		api.BoundBody(api.MaxBody, "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inst.serveWorker(a, w, r) })).ServeHTTP(w, r)
		return
	}
	switch {
	case a.sync != nil && isDirectoryWrite(r):
		a.sync.before(r.Context())
		h.after = func() { a.sync.after(r.Context()) }
	case a.indexer != nil && isDirectoryWrite(r):
		// AI without VECTORIZE: the core's Indexer keeps the vectors in D1,
		// one pass after each write (nothing runs it in the background here).
		h.after = func() {
			ctx, cancel := context.WithTimeout(r.Context(), syncLimit)
			defer cancel()
			if err := a.indexer.Pass(ctx); err != nil {
				slog.Error("rowcall: vectors", "err", err)
			}
		}
	}
	if a.sealing != nil {
		then := h.after
		h.after = func() {
			if then != nil {
				then()
			}
			a.sealing.after(r.Context())
		}
	}
	if err := h.startFrom(r); err != nil {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(jsonObject("error", "invalid_request", "message", err.Error(),
			"how_to_fix", "send back the x-d1-bookmark of an earlier answer unchanged, or none"))
		return
	}
	a.handler.ServeHTTP(w, r)
}

// settings are the Worker's vars and secrets that shape the handler: the
// settings every host reads (app.ReadSettings), and the worker's own.
type settings struct {
	app.Settings
	ownerKeys  []string
	receiptKey string
	debug      bool
	hasDB      bool

	// Sealed receipt segments (sealing.go): the RECEIPTS binding,
	// ROWCALL_RECEIPT_SEGMENT and ROWCALL_RECEIPT_RETAIN.
	hasReceipts            bool
	receiptSegment, retain string

	// Finding rows by meaning (vectors.go): the AI and VECTORIZE bindings,
	// ROWCALL_EMBED_MODEL and ROWCALL_EMBED_DIM.
	hasAI, hasVectorize  bool
	embedModel, embedDim string

	// Callers' own upstream credentials (internal/connect): the providers'
	// JSON and the sealing keys (ROWCALL_CONNECTIONS, ROWCALL_CONNECTIONS_KEY).
	connections, connectionsKey string
}

func readSettings(h *reqHandle) settings {
	s := settings{
		Settings:   app.ReadSettings(h.setting),
		receiptKey: strings.TrimSpace(h.setting("ROWCALL_RECEIPT_KEY")),
		debug:      h.setting("ROWCALL_WORKER_DEBUG") == "1",
		hasDB:      h.hasBinding("DB"),

		hasReceipts:    h.hasBinding(receiptsBinding),
		receiptSegment: h.setting("ROWCALL_RECEIPT_SEGMENT"),
		retain:         h.setting("ROWCALL_RECEIPT_RETAIN"),

		hasAI:        h.hasBinding(aiBinding),
		hasVectorize: h.hasBinding(vectorizeBinding),
		embedModel:   h.setting("ROWCALL_EMBED_MODEL"),
		embedDim:     h.setting("ROWCALL_EMBED_DIM"),

		connections:    h.setting("ROWCALL_CONNECTIONS"),
		connectionsKey: h.setting("ROWCALL_CONNECTIONS_KEY"),
	}
	for _, name := range []string{"ROWCALL_OWNER_KEY", "ROWCALL_OWNER_KEY_PREVIOUS"} {
		if k := strings.TrimSpace(h.setting(name)); k != "" {
			s.ownerKeys = append(s.ownerKeys, k)
		}
	}
	return s
}

func (s settings) equal(o settings) bool {
	return strings.Join(s.ownerKeys, "\n") == strings.Join(o.ownerKeys, "\n") && s.receiptKey == o.receiptKey &&
		s.Settings == o.Settings && s.debug == o.debug && s.hasDB == o.hasDB &&
		s.hasReceipts == o.hasReceipts && s.receiptSegment == o.receiptSegment && s.retain == o.retain &&
		s.hasAI == o.hasAI && s.hasVectorize == o.hasVectorize && s.embedModel == o.embedModel && s.embedDim == o.embedDim &&
		s.connections == o.connections && s.connectionsKey == o.connectionsKey
}

// served is the handler built from one set of settings.
type served struct {
	settings settings
	handler  http.Handler
	api      *api.Handler // the API handler wraps (nil when the settings fail: broken says why)
	broken   error
	seeder   *seeder // nil: no examples to install (ROWCALL_NO_EXAMPLES, or a failing handler)

	// Finding rows by meaning: nil without the AI binding (words only), or
	// without VECTORIZE (vectors kept as the core keeps them).
	embedder rowcall.Embedder
	vectors  rowcall.VectorIndex
	sync     *vectorSync      // the AI and VECTORIZE bindings both: Vectorize kept current after writes
	indexer  *vectors.Indexer // AI alone: the core's vectors in D1, one pass after each write
	sealing  *sealing         // the RECEIPTS binding: the chain sealed into segments in R2
}

// appFor returns the handler for the settings in h's env: the current one, or
// a new one when they changed. A request whose env is the very object the
// current settings were read from (workerd hands every request in an isolate
// the same env) is not read again: a Worker's vars and secrets cannot change
// under a live isolate.
func (inst *instance) appFor(h *reqHandle) *served {
	inst.mu.Lock()
	a, env := inst.app, inst.env
	inst.mu.Unlock()
	if a != nil && h.env.Equal(env) {
		return a
	}
	s := readSettings(h)
	inst.settingsReads.Add(1)
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if inst.app == nil || !inst.app.settings.equal(s) {
		a := &served{settings: s}
		built, err := inst.build(s, a)
		if err != nil {
			a.handler, a.broken = failing(err), err
		} else {
			a.handler, a.api, a.indexer = built.Handler, built.API, built.Indexer
			if !s.NoExamples {
				a.seeder = &seeder{db: inst.db, store: built.Store, fn: inst.fn}
			}
		}
		inst.app = a
	}
	inst.env = h.env
	return inst.app
}

// isOwner reports whether r presents one of a's owner keys (api.IsOwner).
func (a *served) isOwner(r *http.Request) bool {
	return api.IsOwner(r, a.settings.ownerKeys)
}

// receiptSigner reads the receipt signing key (the secret ROWCALL_RECEIPT_KEY).
// A worker cannot keep a generated key (it has no disk), so the key is required.
func receiptSigner(enc string) (*ledger.Signer, error) {
	fix := "run `openssl rand -base64 32 | npx wrangler secret put ROWCALL_RECEIPT_KEY` (or, with wrangler dev, --var ROWCALL_RECEIPT_KEY:<base64 seed>)"
	if enc == "" {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "the worker has no receipt signing key: the secret ROWCALL_RECEIPT_KEY is not set", HowToFix: fix}
	}
	seed, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_RECEIPT_KEY is not base64: " + err.Error(), HowToFix: fix}
	}
	s, err := ledger.NewSigner(seed)
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_RECEIPT_KEY: " + err.Error(), HowToFix: fix}
	}
	return s, nil
}

// failing answers every request with err: a worker that is not configured says
// what to fix instead of failing in obscure ways.
func failing(err error) http.Handler {
	e, _ := err.(*rowcall.Error)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		msg, fix := err.Error(), ""
		if e != nil {
			msg, fix = e.Message, e.HowToFix
		}
		w.Write(jsonObject("error", "not_configured", "message", msg, "how_to_fix", fix))
	})
}
