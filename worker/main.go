//go:build js && wasm

// Command worker is rowcall on Cloudflare Workers: the same api.Handler as the
// local host, compiled to GOOS=js GOARCH=wasm.
//
// One Go instance per isolate. rowcall's own JavaScript entry
// (build/shim/worker.mjs, copied to build/out/worker/worker.mjs by
// build/worker.sh, beside syumai/workers' wasm_exec.js) starts this program on
// the isolate's first request and hands it every request after that; main
// registers serve (serve.go) and never returns. If the program dies, the shim
// starts a fresh one on the next request. So everything built here — the
// *sql.DB, the dispatcher with its row cache, the receipt log, the fn runner
// with its compiled modules — lives as long as the isolate, and nothing in it
// holds a platform object: each request brings its own env and
// ExecutionContext (request.go), every binding is looked up through the handle
// of the request that uses it, and the platform is reached only through the
// shim's d1, fetch and r2 helpers (ops.go), which account every operation to
// the request context it runs in.
//
// Platform pieces, all taken from each request's env (wrangler.toml):
//
//	DB                       D1 binding: the directory, event log and receipts (d1.go;
//	                         single statements: D1 has no interactive transactions, and
//	                         rowcall needs none). The schema is applied by
//	                         `wrangler d1 migrations apply DB` from migrations/.
//	MODULES                  R2 binding: fn module bytes, addressed by SHA-256 (optional:
//	                         without it the bytes go to D1's module_blobs table).
//	ROWCALL_OWNER_KEY        secret: the owner key (wrangler secret put ROWCALL_OWNER_KEY);
//	ROWCALL_OWNER_KEY_PREVIOUS  optional second key accepted during a rotation.
//	ROWCALL_RECEIPT_KEY      secret: the receipt signing key, a base64 32-byte Ed25519 seed
//	                         (openssl rand -base64 32 | npx wrangler secret put ROWCALL_RECEIPT_KEY).
//	ROWCALL_AUDIENCE         var: this host's token audience (default "rowcall").
//	ROWCALL_PUBLIC_READS     var: "true" (or 1, yes, on) lets anyone read the directory.
//	ROWCALL_PUBLIC_URL       var: base URL of public receipt links and of $SELF (default: the
//	                         request's origin).
//	ROWCALL_ALLOW_OUTBOUND   var: CIDRs (CIDR:port for one port) and host names http rows may
//	                         reach although they are loopback or private literals (see guard.go).
//	ROWCALL_SECRETS_PREFIX   var: only variables starting with it may be named in rows' auth.
//	ROWCALL_MODEL_PROVIDERS, ROWCALL_MODEL_DEFAULT, ROWCALL_MODEL_PRICES
//	                         vars: agent rows' model providers (agent.go).
//	ROWCALL_NO_EXAMPLES      var: "true" (or 1, yes, on) keeps a fresh database empty (no
//	                         example rows; seed.go).
//	ROWCALL_WORKER_DEBUG     var: "1" enables POST /_worker/crash (tests only; see stats.go).
//	any other secret or var  a credential that rows name in their auth column.
//
// The settings are read from a request's env when it is not the env object the
// current handler's settings were read from (workerd hands every request of
// an isolate the same one), and compared with those; a change builds a new
// handler for the requests that carry it.
//
// Outbound HTTP goes through the Worker's fetch() (fetch.go), behind guard.
package main

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/directory"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/runners/flow"
	"github.com/rowcall/rowcall/runners/httpcall"
	"github.com/rowcall/rowcall/sqlstore"
)

func main() {
	inst := newInstance()
	registerServe(inst)
	select {} // serve answers from callbacks; main must never return
}

// instance is what one Go instance keeps between requests.
type instance struct {
	number   int // the isolate's nth Go instance (from the shim): 1 unless one died
	started  time.Time
	requests atomic.Int64

	db      *sql.DB
	fn      *lazyFn
	fetcher http.RoundTripper

	mu  sync.Mutex
	app *app     // built from the settings the latest requests carried
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
	inst.requests.Add(1)
	h, _ := handleFrom(r.Context())
	a := inst.appFor(h)
	a.seeder.seed(r.Context())
	if strings.HasPrefix(r.URL.Path, "/_worker/") {
		inst.serveWorker(a, w, r)
		return
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

// settings are the Worker's vars and secrets that shape the handler.
type settings struct {
	ownerKeys     []string
	receiptKey    string
	audience      string
	publicReads   bool
	publicURL     string
	allowOutbound string
	secretsPrefix string
	debug         bool
	noExamples    bool
	hasDB         bool
	models        modelSettings
}

func readSettings(h *reqHandle) settings {
	s := settings{
		receiptKey:    strings.TrimSpace(h.setting("ROWCALL_RECEIPT_KEY")),
		audience:      cmp.Or(h.setting("ROWCALL_AUDIENCE"), "rowcall"),
		publicReads:   h.settingBool("ROWCALL_PUBLIC_READS"),
		publicURL:     h.setting("ROWCALL_PUBLIC_URL"),
		allowOutbound: h.setting("ROWCALL_ALLOW_OUTBOUND"),
		secretsPrefix: h.setting("ROWCALL_SECRETS_PREFIX"),
		debug:         h.setting("ROWCALL_WORKER_DEBUG") == "1",
		noExamples:    h.settingBool("ROWCALL_NO_EXAMPLES"),
		hasDB:         h.hasBinding("DB"),
		models: modelSettings{providers: h.setting("ROWCALL_MODEL_PROVIDERS"), def: h.setting("ROWCALL_MODEL_DEFAULT"),
			prices: h.setting("ROWCALL_MODEL_PRICES")},
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
		s.audience == o.audience && s.publicReads == o.publicReads && s.publicURL == o.publicURL &&
		s.allowOutbound == o.allowOutbound && s.secretsPrefix == o.secretsPrefix && s.debug == o.debug && s.noExamples == o.noExamples &&
		s.hasDB == o.hasDB && s.models == o.models
}

// app is the handler built from one set of settings.
type app struct {
	settings settings
	handler  http.Handler
	seeder   *seeder // nil: no examples to install (ROWCALL_NO_EXAMPLES, or a failing handler)
}

// appFor returns the handler for the settings in h's env: the current one, or
// a new one when they changed. A request whose env is the very object the
// current settings were read from (workerd hands every request in an isolate
// the same env) is not read again: a Worker's vars and secrets cannot change
// under a live isolate.
func (inst *instance) appFor(h *reqHandle) *app {
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
		a := &app{settings: s}
		handler, store, err := inst.build(s)
		if err != nil {
			handler = failing(err)
		} else if !s.noExamples {
			a.seeder = &seeder{db: inst.db, store: store, fn: inst.fn}
		}
		a.handler = handler
		inst.app = a
	}
	inst.env = h.env
	return inst.app
}

// isOwner reports whether r presents one of a's owner keys (api.IsOwner).
func (a *app) isOwner(r *http.Request) bool {
	return api.IsOwner(r, a.settings.ownerKeys)
}

// build wires the API handler for s over the instance's database, fetch
// client and fn runner, and returns it with the store it serves.
func (inst *instance) build(s settings) (http.Handler, *sqlstore.Store, error) {
	keys := s.ownerKeys
	if len(keys) == 0 {
		return nil, nil, &rowcall.Error{Code: rowcall.EInternal,
			Message:  "the worker has no owner key: the secret ROWCALL_OWNER_KEY is not set",
			HowToFix: "run `npx wrangler secret put ROWCALL_OWNER_KEY` (or, with wrangler dev, --var ROWCALL_OWNER_KEY:<key> or a .dev.vars file)"}
	}
	signer, err := receiptSigner(s.receiptKey)
	if err != nil {
		return nil, nil, err
	}
	if !s.hasDB {
		return nil, nil, &rowcall.Error{Code: rowcall.EInternal, Message: "the worker has no D1 binding named DB",
			HowToFix: "add [[d1_databases]] binding = \"DB\" to wrangler.toml (see README.md)"}
	}
	policy, err := outbound.Parse(s.allowOutbound)
	if err != nil {
		return nil, nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_ALLOW_OUTBOUND: " + err.Error(),
			HowToFix: "list CIDRs, IPs, IP:port or CIDR:port entries or host names separated by commas, e.g. 127.0.0.1/32, 127.0.0.1:9000"}
	}
	// Rows reach this worker's own API as $SELF (ROWCALL_PUBLIC_URL, else the
	// origin the request came in on), served in-process by the handler: a
	// Worker cannot fetch() its own hostname.
	self := &outbound.Self{Base: func(ctx context.Context) string {
		if s.publicURL != "" {
			return strings.TrimRight(s.publicURL, "/")
		}
		if h, err := handleFrom(ctx); err == nil {
			return h.origin
		}
		return ""
	}}
	store := sqlstore.New(inst.db)
	models, err := s.models.runner(policy, store, inst.fetcher)
	if err != nil {
		return nil, nil, err
	}
	disp := &dispatch.Dispatcher{
		Speculate: true, // every call would look at D1's event log first: fn calls let the receipt's INSERT look
		Store:     store,
		Env:       noEnv{}, // each call reads its own request's env (requestEnv)
		Receipts:  sqlstore.NewReceiptLog(store, signer),
		Audience:  s.audience,
		Runners: map[rowcall.Type]rowcall.Runner{
			rowcall.TypeHTTP:  requestEnv{httpcall.New(httpcall.Config{Client: self.Client(client(policy, inst.fetcher)), Self: self.Base}), s.secretsPrefix},
			rowcall.TypeFlow:  requestEnv{flow.Runner{}, s.secretsPrefix},
			rowcall.TypeFn:    requestEnv{inst.fn, s.secretsPrefix},
			rowcall.TypeAgent: requestEnv{models, s.secretsPrefix},
		},
		Modules: inst.fn,
	}
	dir := directory.New(store, s.secretsPrefix) // the write path: its rules, and a notice to the dispatcher
	dir.Subscribe(disp.Touch)
	handler := inst.fn.registering(api.New(api.Config{OwnerKeys: func() []string { return keys }, ReceiptKeys: []ledger.PublicKey{signer.Public()},
		Signer: signer, PublicReads: s.publicReads, PublicURL: s.publicURL, Modules: inst.fn.registry()}, dir, store, disp))
	self.Handler = handler
	return handler, store, nil
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
