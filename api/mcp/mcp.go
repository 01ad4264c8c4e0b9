// Package mcp projects the directory as a Model Context Protocol server
// (Streamable HTTP, with the official Go SDK, github.com/modelcontextprotocol/go-sdk),
// mounted by the api package at /mcp.
//
// What a client sees:
//
//   - tools/list: the two meta-tools, search_capabilities (plain words → the best
//     matching rows, each with its key, what it does and how to call it) and
//     call_capability (key + pipe-separated args, or named arguments), and the
//     rows the caller may call — enabled, planner_visible, inside the token's
//     scope (the owner sees every row; a token does not see rows it could never
//     call: owner-only rows, and sensitive rows above its risk ceiling) — one
//     tool per row, named by its key, at most Config.MaxTools of them, in the
//     directory's canonical order (pinned seq first, then key). A directory of
//     ten thousand rows stays usable: the meta-tools reach every row without
//     loading them. A row's inputSchema is its input_schema when it declares
//     top-level properties (named arguments, joined into the pipe-separated body
//     in declared order by typed.Body); otherwise one string argument, args,
//     the body itself. The description is what the row says it does (its
//     # WHAT line, else its first # line: Row.Description) and its
//     # WHEN_TO_USE line; args carries its # ARGS line and an example. The meta-tools'
//     own definitions are kept short (a client sends them to its model every
//     turn). The list is paginated with the specification's cursor: a client
//     that connects to /mcp?page_size=N (or a Config.PageSize) gets N tools
//     an answer and a nextCursor for the rest; otherwise every tool at once.
//   - tools/call: any row the caller may see, listed or not (a row outside a
//     token's scope is an unknown tool to it); dispatch.Dispatcher runs the
//     row with the caller's actor and token — the same gate, the same signed
//     receipt as POST /api/dispatch. The result string is the first text
//     block (an MCP row's: the blocks its tool answered, as they came, and
//     its structuredContent); the next names the receipt (invocation id,
//     public link); the result's _meta holds the proof fields under
//     "rowcall/call" (CallMeta). A row that declares output_schema lists it
//     as its tool's outputSchema, and structuredContent is the result
//     itself, checked against it (output.go); otherwise there is none but an
//     MCP tool's own.
//     isError is set when the result starts with ERR: or the call was refused.
//     The row is read through the dispatcher's row cache (Dispatcher.Row), so
//     a call pays no query the same call over POST /api/dispatch does not.
//     search_capabilities' text block says what each match does and when to
//     use it; its structuredContent carries what a program needs to call it
//     (key, call line, schema or args), not the same prose again.
//   - notifications/tools/list_changed (capability tools.listChanged): while
//     sessions are open, one goroutine polls the event log every Config.Poll
//     (one indexed MAX(id) query), so a row created, edited or deleted through
//     the API or directly in SQL reaches every session whose projection it
//     changes — and only those: a token's session is not told about rows
//     outside its scope. A change that lands before the client has attached
//     its GET stream is announced as soon as the stream attaches.
//
// Design: one SDK server per session, built for the caller who initialized it
// (its tool set is that caller's projection); the session is bound to that
// credential (owner, or the token's id), and a request on it with another
// credential is refused. Credentials are the API's own (x-terminal-key or
// Authorization: Bearer with the owner key or a capability token); a request
// without one is the API's 401 (Config.Unauthorized).
//
// Bounds: a session with no request for Config.Idle (DefaultIdle) is closed;
// one credential holds at most Config.SessionsPerCredential sessions and the
// server Config.MaxSessions. An initialize past either cap closes the least
// recently used idle session (of that credential, else any), whose next
// request is the specification's 404 (the client initializes again), or,
// when every session is serving a request, is refused: 429
// {"error":"too_many_sessions"}. The sessions of one credential share its
// projection (the tool definitions), so an open session costs a few
// kilobytes (TestSessionCost).
//
// Origin: a request whose Origin header is not loopback, the host's own
// public URL (Config.Base) or one of Config.Origins is refused 403
// {"error":"forbidden"}, before its credential is read (the specification's
// defence against DNS rebinding and cross-site pages). A request without
// Origin (every non-browser client) is served. An allowed origin gets CORS
// headers, and its preflight (OPTIONS) is answered without a credential.
//
// The fast path (fast.go): a plain tools/call on a session the SDK has
// initialized is answered here, with the same tool handlers and the bytes the
// SDK would write, without the SDK's JSON-RPC connection and streamable
// transport (they cost more CPU than the call's dispatch); every other
// request, and any tools/call out of the plain form, is the SDK's.
//
// On GOOS=js the handler is stateless: the worker keeps one Go instance per
// isolate, but a session's next request may reach another isolate, or an
// isolate started after this one was evicted, where no session kept in memory
// would be found. So each request gets a fresh server and no session is kept,
// and there is no list_changed there; clients list again instead. A host
// answers the per-request protocol (2026-07-28) the same way, beside its
// sessions (perrequest.go). Beside tools, surface.go offers the contract
// documents as resources, completion, tool annotations, media results and
// progress, and complete.go each row's call as a resource template whose
// arguments complete from the row's enums and examples.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
)

// Caller is who made a request, as the API resolves it.
type Caller = rowcall.Principal

// identity is what a session is bound to: the owner, or one token, and the
// person behind either.
func identity(c Caller) string {
	id := "owner"
	if c.Token != nil {
		id = "token:" + c.Token.ID
	}
	if c.Person != nil {
		id += "/person:" + c.Person.ID
	}
	return id
}

// Defaults for Config.
const (
	DefaultMaxTools = 50
	DefaultPoll     = 500 * time.Millisecond
	// MaxPageSize is the largest tools/list page (?page_size=, Config.PageSize).
	MaxPageSize = 1000
	// DefaultIdle closes a session that sent no request for this long (an
	// open notification stream does not count: clients that only listen
	// should ping).
	DefaultIdle = 5 * time.Minute
	// DefaultMaxSessions and DefaultSessionsPerCredential bound the sessions
	// open at once, in all and for one credential.
	DefaultMaxSessions           = 1000
	DefaultSessionsPerCredential = 32
)

// ETooManySessions refuses an initialize past a session cap when no session
// is idle (429).
const ETooManySessions rowcall.Code = "too_many_sessions"

// Config is what the API hands the MCP server.
type Config struct {
	Store      rowcall.DirectoryReader
	Dispatcher *dispatch.Dispatcher
	// Caller resolves the request's credential; ok false (no credential, or an
	// unusable one) is answered by Unauthorized.
	Caller func(r *http.Request) (c Caller, ok bool)
	// ReceiptBase is what the public address of a receipt starts with for a
	// request made as r: a receipt's link is ReceiptBase(r) + its id. It is
	// read once a request (no link when nil).
	ReceiptBase func(r *http.Request) string
	// Unauthorized and Fail answer a refused request the way the API does
	// (its 401, api.Unauthorized; {"error":code,…} for the rest).
	Unauthorized func(w http.ResponseWriter, r *http.Request)
	Fail         func(w http.ResponseWriter, r *http.Request, err error)
	// PageSize is how many tools one tools/list answer carries (the rest
	// follow its nextCursor, the specification's pagination): every tool in
	// one answer when 0. A client sets its own with ?page_size=N on the
	// endpoint's address (1 to MaxPageSize).
	PageSize int
	// Poll is how often the event log is read while sessions are open.
	Poll time.Duration
	// Limits are the operator's bounds.
	Limits
	// Base is this host's public base URL for a request (scheme://host…):
	// its origin may call /mcp from a browser, and the links of a contract
	// document read as a resource start with it. Nil: only loopback and
	// Origins may call.
	Base func(r *http.Request) string
	// Stateless keeps no sessions (so sends no list_changed). Always on for GOOS=js.
	Stateless bool
	// Version is reported as the server's version ("dev" when empty).
	Version string
}

// Limits are what an operator sets: how many rows tools/list carries, how
// long a session may sit idle, how many may be open, and which web origins
// may call /mcp.
type Limits struct {
	// Idle closes a session that sent no request for this long: DefaultIdle
	// when 0.
	Idle time.Duration
	// MaxSessions and SessionsPerCredential cap the sessions open at once,
	// in all and for one credential (the owner, or one token):
	// DefaultMaxSessions and DefaultSessionsPerCredential when 0.
	MaxSessions, SessionsPerCredential int
	// MaxTools caps the rows listed as tools (beyond the two meta-tools):
	// DefaultMaxTools when 0, none when negative. tools/call reaches every
	// row the caller may see, listed or not.
	MaxTools int
	// Origins are the web origins (scheme://host[:port]) besides loopback
	// and Config.Base whose pages may call /mcp; a request with any other
	// Origin is refused 403.
	Origins []string
}

// Handler serves /mcp.
type Handler struct {
	cfg Config
	sdk *sdk.StreamableHTTPHandler
	// perReq answers the per-request protocol's requests on a host that
	// keeps sessions (perrequest.go); nil when stateless.
	perReq *sdk.StreamableHTTPHandler
	bare   *sdk.Server // no tools: asked for protocol versions, and answers (then closes) a sessionless non-initialize POST

	slow atomic.Bool  // every request to the SDK (the fast path off: tests compare)
	fast atomic.Int64 // calls the fast path took

	origins map[string]bool // Config.Origins, normalized

	mu          sync.Mutex
	sessions    map[string]*session    // by Mcp-Session-Id
	projections map[string]*projection // by credential: what its sessions share
	pending     map[string]int         // by credential: sessions admitted, not yet registered
	pendingAll  int
	polling     bool
	stop        chan struct{}
	closed      bool
}

// New returns the /mcp handler.
func New(cfg Config) *Handler {
	if cfg.MaxTools == 0 {
		cfg.MaxTools = DefaultMaxTools
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.SessionsPerCredential <= 0 {
		cfg.SessionsPerCredential = DefaultSessionsPerCredential
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	cfg.Stateless = cfg.Stateless || runtime.GOOS == "js"
	h := &Handler{cfg: cfg, sessions: map[string]*session{}, projections: map[string]*projection{}, pending: map[string]int{},
		origins: map[string]bool{}, stop: make(chan struct{})}
	for _, o := range cfg.Origins {
		if o, ok := origin(o); ok {
			h.origins[o] = true
		}
	}
	h.bare = sdk.NewServer(h.implementation(), nil)
	opts := &sdk.StreamableHTTPOptions{
		Stateless: cfg.Stateless,
		// A POST's answer is one JSON message (application/json), not an
		// SSE stream of one event: the specification lets a server answer
		// either way and a client must take both, and rowcall sends nothing
		// else during a request (list_changed goes on the GET stream; a
		// call's progress is the fast path's event stream: progressStream). A
		// client spends less on it (the Go SDK's: 4-8% less CPU a call
		// than on the event: BenchmarkSDKClientAnswer; docs/benchmarks.md, "MCP").
		JSONResponse: true,
		// ServeHTTP checks Origin itself (allowedOrigin: loopback, the
		// public URL, Config.Origins); the SDK's Host check would refuse a
		// host served on loopback behind a proxy or tunnel.
		DisableLocalhostProtection: true,
		// No SessionTimeout: the SDK would count only the requests it sees,
		// and the fast path answers most; the poller closes idle sessions.
	}
	h.sdk = sdk.NewStreamableHTTPHandler(h.server, opts)
	if !cfg.Stateless {
		perReq := *opts
		perReq.Stateless = true
		h.perReq = sdk.NewStreamableHTTPHandler(h.server, &perReq)
	}
	return h
}

func (h *Handler) implementation() *sdk.Implementation {
	return &sdk.Implementation{Name: "rowcall", Title: "rowcall capability directory", Version: h.cfg.Version}
}

// pendingKey carries the session built for a request from ServeHTTP to the
// SDK's getServer callback (only a request that opens a session carries one).
type pendingKey struct{}

// ServeHTTP authenticates the request, binds it to its session's credential,
// and hands it to the SDK's Streamable HTTP handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.checkOrigin(w, r) { // refused, or a CORS preflight answered (bounds.go)
		return
	}
	c, ok := h.cfg.Caller(r)
	if !ok {
		h.cfg.Unauthorized(w, r)
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" && !h.cfg.Stateless {
		h.mu.Lock()
		st := h.sessions[id]
		h.mu.Unlock()
		if st == nil { // closed (idle, evicted, deleted) or never opened here
			h.cfg.Fail(w, r, errSessionEnded)
			return
		}
		if st.identity != identity(c) {
			h.cfg.Fail(w, r, &rowcall.Error{Code: rowcall.EForbidden, Message: "this MCP session belongs to another credential",
				HowToFix: "initialize a new session with your own credential"})
			return
		}
		st.touch(c, r)
		switch r.Method {
		case http.MethodPost:
			st.begin()
			defer st.end()
			if h.serveFast(w, r, st, id, false) {
				return
			}
		case http.MethodGet: // the session's notification stream
			sw := &streamWriter{ResponseWriter: w, st: st}
			defer sw.ended()
			w = sw
		case http.MethodDelete:
			defer h.drop(id)
		}
	}
	stateless := h.statelessRequest(r)
	if stateless {
		if _, err := h.pageSize(r); err == nil && // a bad page_size is refused below, as for every stateless request
			h.serveFast(w, r, h.bareSession(c, r), "", true) {
			return
		}
	}
	if stateless || (r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && initializing(r)) {
		size, err := h.pageSize(r)
		if err != nil {
			h.cfg.Fail(w, r, err)
			return
		}
		keep := !stateless // a session the SDK registers: bounded (bounds.go)
		if keep {
			if err := h.admit(identity(c)); err != nil {
				h.cfg.Fail(w, r, err)
				return
			}
		}
		st, err := h.newSession(r.Context(), c, r, size, stateless)
		if keep {
			if st == nil {
				st = &session{identity: identity(c)}
			}
			st.reserved = true
			defer h.release(st) // unless the SDK registered it
		}
		if err != nil {
			h.cfg.Fail(w, r, fmt.Errorf("mcp: building a session: %w", err))
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), pendingKey{}, st))
		if stateless && !h.cfg.Stateless && carries(r, "subscriptions/listen") {
			defer h.listen(st)() // list_changed reaches the stream while it is open
		}
	}
	h.transport(r).ServeHTTP(w, r) // a request on a session (the SDK asks for no server) or for the bare one
}

// errSessionEnded answers a request on a session this handler does not hold:
// the specification's 404, which tells a client to initialize again. The
// handler answers it itself because a session it closed leaves the SDK's
// map only once the SDK's close has finished, after its streams ended.
var errSessionEnded = &rowcall.Error{Code: rowcall.ENotFound, Status: http.StatusNotFound,
	Message:  "this MCP session has ended (closed after sitting idle, closed for a newer one past the session cap, deleted, or opened before the host restarted)",
	HowToFix: "initialize a new session (POST /mcp with initialize and no Mcp-Session-Id)"}

// pageSize is the tools/list page size a session is opened with: the
// endpoint's ?page_size=, else Config.PageSize, else every tool at once.
func (h *Handler) pageSize(r *http.Request) (int, error) {
	v := r.URL.Query().Get("page_size")
	if v == "" {
		return min(max(h.cfg.PageSize, 0), MaxPageSize), nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxPageSize {
		return 0, &rowcall.Error{Code: rowcall.EInvalid, Message: "page_size must be a whole number from 1 to " + strconv.Itoa(MaxPageSize) + ", not " + strconv.Quote(v),
			HowToFix: "connect to /mcp?page_size=50, or to /mcp for every tool in one tools/list answer"}
	}
	return n, nil
}

// initializing reports whether a POST carries an initialize request (the body
// is read and put back). Only that opens a session worth building; anything
// else without a session id (such as a newer client's server/discover probe)
// goes to the bare server, which the SDK answers and closes.
func initializing(r *http.Request) bool { return carries(r, "initialize") }

// carries reports whether a POST's body holds a request for method (the body
// is read and put back).
func carries(r *http.Request, method string) bool {
	for _, m := range messages(r) {
		if m.Method == method {
			return true
		}
	}
	return false
}

// message is what ServeHTTP reads of a request: its method, and the tool a
// tools/call names.
type message struct {
	Method string `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// messages are the messages of a POST's body (the body is read and put
// back): one, or an older protocol's batch.
func messages(r *http.Request) []message {
	b, err := io.ReadAll(io.LimitReader(r.Body, sdk.DefaultMaxRequestBodyBytes+1))
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	var batch []message
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		json.Unmarshal(t, &batch)
	} else {
		var one message
		json.Unmarshal(t, &one)
		batch = append(batch, one)
	}
	return batch
}

// calledRow returns the tool a stateless request calls when it is one
// tools/call of a row's tool (not a meta-tool): its server needs that tool
// alone, not the caller's projection.
func calledRow(r *http.Request) (string, bool) {
	m := messages(r)
	if len(m) != 1 || m[0].Method != "tools/call" || m[0].Params.Name == "" ||
		m[0].Params.Name == SearchTool || m[0].Params.Name == CallTool {
		return "", false
	}
	return m[0].Params.Name, true
}

// streamWriter watches a session's GET stream: once the SDK writes its 200
// the stream is attached, and every list_changed from then on reaches it.
type streamWriter struct {
	http.ResponseWriter
	st    *session
	ready bool
}

func (w *streamWriter) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && !w.ready {
		w.ready = true
		w.st.streamReady()
	}
}

func (w *streamWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *streamWriter) ended() {
	if w.ready {
		w.st.streamEnded()
	}
}

// server is the SDK's getServer: the session server built for a request that
// opens a session (every POST, when stateless); otherwise a bare server, which
// the SDK asks only for its protocol versions.
func (h *Handler) server(r *http.Request) *sdk.Server {
	if st, _ := r.Context().Value(pendingKey{}).(*session); st != nil {
		return st.server
	}
	return h.bare
}

// register records a new session under its id and makes sure the poller runs.
func (h *Handler) register(id string, st *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.unreserve(st)
	st.id = id
	h.sessions[id] = st
	if !h.polling {
		h.polling = true
		go h.poll()
	}
}

func (h *Handler) drop(id string) {
	h.mu.Lock()
	delete(h.sessions, id)
	h.mu.Unlock()
}

// Close ends every open session (their notification streams included), so a
// server shutting down does not wait for clients that keep a stream open.
func (h *Handler) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	close(h.stop)
	all := make([]*session, 0, len(h.sessions))
	for _, st := range h.sessions {
		all = append(all, st)
	}
	h.sessions = map[string]*session{}
	h.mu.Unlock()
	for _, st := range all {
		st.close()
	}
}
