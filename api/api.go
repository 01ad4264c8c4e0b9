// Package api is rowcall's HTTP surface: one http.Handler, built from the core
// packages, served unchanged by the local host and the Cloudflare worker.
//
// Every response is JSON. Errors are {"error":<stable code>,"message":…,
// "how_to_fix":…}; a refused write adds "state_changed":false. The seed's literal
// bodies ({"error":"unauthorized"}, {"error":"no recognized fields"},
// registry_hygiene_refused: …) are kept exactly.
//
// New builds the Handler from a Config, the store and the dispatcher; the local
// host serves it with net/http and the worker through its bridge to the shim.
// Close ends open MCP sessions at shutdown. The routes are listed in routes;
// docs/rows.md and the pages it links document each.
package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api/mcp"
	"github.com/rowcall/rowcall/internal/connect"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/runners/fn/modules"
)

// Config is what the operator sets.
type Config struct {
	OwnerKeys func() []string // the owner keys valid now (two during a rotation)
	// OwnerKeyLoopbackOnly accepts the owner key only from a loopback
	// address (ROWCALL_OWNER_KEY_LOOPBACK_ONLY): the break-glass key of a
	// host whose people sign in, usable on the machine alone.
	OwnerKeyLoopbackOnly bool
	// ReceiptKeys are the keys served at /.well-known/rowcall-receipt-keys,
	// with which confirm verifies receipts (nil: none). Called once, on first
	// use: deriving a key is the costliest step of a worker's start, and a
	// first request that reads no receipt does not pay it.
	ReceiptKeys func() []ledger.PublicKey
	Signer      *ledger.Signer // the receipt signing key: signs the chain head at /.well-known/rowcall-checkpoint
	PublicReads bool           // let anyone read the directory without a credential
	// PublicURL is the base of every link the API writes (public receipts,
	// contract documents, the discovery answers). When "", the request's own
	// Host and whether it came over TLS; X-Forwarded-Proto and X-Forwarded-Host
	// only when TrustForwarded (a proxy in front sets them, and a client could).
	// When PublicURL is "" and forwarded headers are not trusted, ListenURL
	// (the host's listen address) is the base instead of the request's Host.
	PublicURL      string
	ListenURL      string
	TrustForwarded bool
	Modules        *modules.Registry // fn modules; nil on a host without them
	// OpenAPI converts an OpenAPI document into rows for POST
	// /api/import/openapi (internal/openapi.Convert: the local host sets it).
	// The worker leaves it nil, which keeps the parser (1.4 MB of .wasm) out
	// of its build; the endpoint then answers 501, and `rowcall import
	// openapi`, which converts on the caller's machine, still works.
	OpenAPI func(doc []byte, o OpenAPIOptions) (OpenAPIResult, error)
	// MCPTools lists an MCP server's tools as rows for POST /api/import/mcp
	// (internal/mcpimport over runners/mcpcall: app.New sets it on every
	// host, the worker included); nil leaves the endpoint answering 501.
	MCPTools func(ctx context.Context, o MCPImportOptions) (rows []rowcall.Row, skipped []string, err error)
	// MCPSync compares the rows that call one MCP server (stored) with the
	// tools it lists now, for POST /api/mcp/sync (internal/mcpimport.Sync:
	// app.New sets it): the rows to write, and a report per row.
	MCPSync func(ctx context.Context, server string, stored []rowcall.Row, accept, reject func(key string) bool) (writes []rowcall.Row, changes any, err error)
	// SimilarRows starts making a row's vector (the stored one when current)
	// beside its write, for the write's similar_rows and for GET
	// /api/directory/{key}/similar (nil: the host has no embedder, and
	// answers carry no similar_rows); Near then finds up to n rows near the
	// vector of row self that f lets the caller see, with cosine at least
	// atLeast.
	SimilarRows func(ctx context.Context, row *rowcall.Row) rowcall.PendingVector
	Near        func(ctx context.Context, v []float32, self string, f rowcall.SearchFilter, n int, atLeast float64) ([]rowcall.VectorHit, error)
	// MCP bounds the MCP server's sessions and names the web origins, besides
	// loopback and the public URL (baseURL), whose pages may call /mcp.
	MCP mcp.Limits
	// OAuth keeps OAuth sign-in's clients, consents, codes and refresh
	// tokens (sqlstore.Store); nil serves no OAuth endpoints (oauth.go).
	OAuth rowcall.OAuthGrants
	// Fetch reads client ID metadata documents: the host's outbound client
	// (nil: clients must register).
	Fetch *http.Client
	// Connect runs callers' connections to the operator's providers
	// (connections.go); nil serves no connection endpoints.
	Connect *connect.Service
	// People keeps the organisation's people, their sessions and sign-ins
	// (sqlstore.Store); nil serves no /api/me people or sessions.
	People rowcall.People
	// SignIn is the organisation's OpenID provider (ROWCALL_OIDC_*): nil
	// serves no /login.
	SignIn SignIn
	// SCIMToken is the bearer token of the identity provider's SCIM client
	// (ROWCALL_SCIM_TOKEN): "" serves no /scim/v2 (scim.go). SCIMIssuer is
	// the OpenID provider's issuer (ROWCALL_OIDC_ISSUER) that the people it
	// creates are bound to.
	SCIMToken, SCIMIssuer string
	// Learned keeps ask's learned phrases (internal/learn.Learner); nil
	// serves no /api/learned endpoints.
	Learned Learned
}

// Learned is what the owner reads and edits of ask's learned phrases
// (learned.go).
type Learned interface {
	Phrases(ctx context.Context, key string) ([]rowcall.Phrase, error)
	Teach(ctx context.Context, p rowcall.Phrase) error
	Edit(ctx context.Context, id string, text *string, approved *bool) error
	Forget(ctx context.Context, id string) error
}

// Handler serves the API.
type Handler struct {
	cfg    Config
	dir    rowcall.DirectoryService // rows: reads, and writes through its rules
	store  Store
	disp   *dispatch.Dispatcher
	mux    *http.ServeMux
	router *router                                  // registers on mux, each route behind its body bound (bodies.go)
	mcp    *mcp.Handler                             // the MCP server at /mcp
	keys   func() ([]ledger.PublicKey, ledger.Keys) // cfg.ReceiptKeys, and parsed, on first use
	syncs  mcpSyncs                                 // each MCP server's last sync (SyncMCP)
}

// Store is what the API keeps besides the directory: tokens, breakers and the
// receipt chain. sqlstore.Store implements it.
type Store interface {
	rowcall.Tokens
	rowcall.Breakers
	rowcall.ReceiptReader
}

// New returns the API handler over the directory dir and store, invoking rows
// through disp.
func New(cfg Config, dir rowcall.DirectoryService, store Store, disp *dispatch.Dispatcher) *Handler {
	h := &Handler{cfg: cfg, dir: dir, store: store, disp: disp, mux: http.NewServeMux()}
	h.keys = sync.OnceValues(func() ([]ledger.PublicKey, ledger.Keys) {
		list := []ledger.PublicKey{}
		if cfg.ReceiptKeys != nil {
			list = cfg.ReceiptKeys()
		}
		keys, _ := ledger.ParseKeys(list) // a key that does not parse verifies nothing: confirm says so
		return list, keys
	})
	h.mcp = mcp.New(mcp.Config{Store: dir, Dispatcher: disp, ReceiptBase: func(r *http.Request) string { return h.receiptURL(r, "") }, Unauthorized: h.unauthorized, Fail: writeError,
		Limits: cfg.MCP, Base: h.baseURL,
		Caller: func(r *http.Request) (mcp.Caller, bool) { // the API's credentials; a revoked or expired token is none
			c := h.caller(r)
			// A token minted for another audience is no credential here: the
			// client is sent to sign in for this one (RFC 8707).
			return c, c.Owner || (c.Token != nil && h.usable(c.Token) && h.ours(c.Token))
		}})
	h.router = &router{mux: h.mux}
	h.routes()
	return h
}

func (h *Handler) routes() {
	m := h.router
	m.HandleFunc("POST /api/directory", h.may(rowcall.RightWrite, h.createRow))
	m.HandleFunc("GET /api/directory", h.reader(h.listRows))
	m.HandleFunc("GET /api/directory/{key}", h.reader(h.getRow))
	m.HandleFunc("PUT /api/directory/{key}", h.may(rowcall.RightWrite, h.replaceRow))
	m.HandleFunc("PATCH /api/directory/{key}", h.may(rowcall.RightWrite, h.patchRow))
	m.HandleFunc("DELETE /api/directory/{key}", h.may(rowcall.RightWrite, h.deleteRow))
	m.HandleFunc("GET /api/directory/{key}/history", h.reader(h.history))
	m.HandleFunc("GET /api/directory/{key}/similar", h.reader(h.similar))
	m.HandleFunc("POST /api/dispatch", h.invoker(h.dispatchRow))
	m.HandleFunc("GET /api/approvals", h.invoker(h.listApprovals))
	m.HandleFunc("GET /api/approvals/{id}", h.invoker(h.getApproval))
	m.HandleFunc("POST /api/approvals/{id}/approve", h.invoker(h.decide(true)))
	m.HandleFunc("POST /api/approvals/{id}/deny", h.invoker(h.decide(false)))
	m.HandleFunc("POST /api/tokens", h.may(rowcall.RightCall, h.mintToken))
	m.HandleFunc("GET /api/tokens", h.may(rowcall.RightCall, h.listTokens))
	m.HandleFunc("GET /api/tokens/{id}", h.may(rowcall.RightCall, h.getToken))
	m.HandleFunc("DELETE /api/tokens/{id}", h.may(rowcall.RightCall, h.revokeToken))
	m.HandleFunc("GET /api/receipts", h.may(rowcall.RightRead, h.exportReceipts))
	m.HandleFunc("POST /api/import", h.may(rowcall.RightWrite, h.importRows))
	m.HandleFuncUpTo("POST /api/import/openapi", MaxOpenAPIDocument, h.may(rowcall.RightWrite, h.importOpenAPI))
	m.HandleFunc("POST /api/import/mcp", h.may(rowcall.RightWrite, h.importMCP))
	m.HandleFunc("POST /api/mcp/sync", h.may(rowcall.RightWrite, h.syncMCP))
	m.HandleFunc("GET /api/openapi.json", h.reader(h.exportOpenAPI))
	m.HandleFunc("POST /api/dispatch/{key}", h.invoker(h.callNamed))
	m.HandleFuncUpTo("PUT /api/modules/{name}", modules.MaxSize, h.may(rowcall.RightWrite, h.putModule))
	m.HandleFunc("GET /api/modules", h.reader(h.listModules))
	m.HandleFunc("GET /api/modules/{name}", h.reader(h.getModule))
	m.HandleFunc("DELETE /api/modules/{name}", h.may(rowcall.RightWrite, h.deleteModule))
	m.HandleFunc("GET /.well-known/rowcall-receipt-keys", h.receiptKeys)
	m.HandleFunc("GET /.well-known/rowcall-checkpoint", h.checkpoint)
	m.HandleFunc("GET /api/dispatch", h.dispatchGet)
	m.HandleFunc("GET /receipt/{id}", h.receiptGet)
	m.HandleFunc("DELETE /api/breakers/{key}", h.may(rowcall.RightSettings, h.clearBreaker))
	if h.cfg.Learned != nil {
		m.HandleFunc("GET /api/learned", h.may(rowcall.RightWrite, h.listLearned))
		m.HandleFunc("POST /api/learned", h.may(rowcall.RightWrite, h.addLearned))
		m.HandleFunc("PATCH /api/learned/{id}", h.may(rowcall.RightWrite, h.editLearned))
		m.HandleFunc("DELETE /api/learned/{id}", h.may(rowcall.RightWrite, h.deleteLearned))
	}
	m.HandleFunc("GET /api/me", h.me)
	if h.cfg.People != nil {
		m.HandleFunc("GET /api/people", h.may(rowcall.RightPeople, h.listPeople))
		m.HandleFunc("PATCH /api/people/{id}", h.may(rowcall.RightPeople, h.patchPerson))
		if h.cfg.SignIn == nil {
			// A session outlives a provider taken out of the configuration
			// (it still signs in, personCaller): it can still end.
			m.HandleFunc("POST /logout", h.logout)
		}
	}
	if h.cfg.SignIn != nil {
		h.signInRoutes(m)
	}
	if h.cfg.SCIMToken != "" && h.cfg.People != nil {
		h.scimRoutes(m)
	}
	m.Handle("/mcp", h.mcp)
	h.oauthRoutes(m)
	h.connectionRoutes(m)
	h.consoleRoutes(m)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: r.Method + " " + r.URL.Path + " is not part of the API",
			HowToFix: "see docs/rows.md for the endpoints", Extra: map[string]any{"routes": h.near(r.URL.Path)}})
	})
}

// near lists the routes under the first two segments of path (the routes of
// /api/directory for /api/directory/X/oops), or every route when none is:
// what a caller who mistyped a path may have meant.
func (h *Handler) near(path string) []string {
	segs := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	prefix := "/" + strings.Join(segs[:min(len(segs), 2)], "/")
	var under, all []string
	for _, rt := range h.Routes() {
		p := rt.Pattern[strings.IndexByte(rt.Pattern, ' ')+1:] // "POST /api/x" or "/mcp"
		if p == "/" {
			continue
		}
		all = append(all, rt.Pattern)
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			under = append(under, rt.Pattern)
		}
	}
	if len(under) > 0 {
		return under
	}
	return all
}

// ServeHTTP serves one request. Writes that change what calls read tell the
// dispatcher through the directory's subscribers before their answer goes
// out (rowcall.DirectoryService.Changed).
// A state-changing request that a session cookie authenticates is refused
// unless it came from the host's own pages (crossSite).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.crossSite(r) {
		writeError(w, r, errCrossSite)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Close ends open MCP sessions, whose notification streams would otherwise
// hold a graceful shutdown open (http.Server.RegisterOnShutdown(h.Close)).
func (h *Handler) Close() { h.mcp.Close() }

func asErr(err error, target **rowcall.Error) bool { return errors.As(err, target) }
