package mcp

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one MCP session: the server built for the caller who opened it,
// and what the poller needs to keep its tool list current.
type session struct {
	h        *Handler
	identity string // the credential the session is bound to
	server   *sdk.Server
	handler  sdk.ToolHandler // every tool's, for the SDK (one a session, not one a tool)
	created  time.Time
	id       string // its Mcp-Session-Id, once registered
	reserved bool   // admitted, not yet registered (Handler.admit; h.mu)

	mu      sync.Mutex
	caller  Caller      // refreshed on every request (a revoked token stops at the door)
	links   string      // what receipt links start with, for the latest request (Config.ReceiptBase)
	baseURL string      // the host's public address, for the latest request (Config.Base)
	proj    *projection // the rows listed as tools, shared with the credential's other sessions
	ready   bool        // a GET stream is attached: list_changed reaches the client
	missed  bool        // the list changed while no stream was attached

	busy      int                           // POSTs being served
	last      time.Time                     // when the last POST ended (or the session was built)
	inflight  map[string]context.CancelFunc // fast calls running, by request id (JSON)
	watched   map[string]string             // contract resources subscribed to: URI → document last read
	awaited   map[string]bool               // approvals whose elicitation's completion the session is told (approval.go)
	completed []string                      // approvals decided while no GET stream was attached: told when one attaches
}

// projection is a credential's rows listed as tools at one head of the
// event log: built once, and shared by every session of the credential that
// has seen that head (a session holds a pointer, not a copy).
type projection struct {
	head  int64
	tools []projected
	fps   map[string]string // key → fingerprint of the tool's definition
}

// projectionFor returns caller's projection at head: the one its sessions
// share when it is current, else a new one (which they will share).
func (h *Handler) projectionFor(ctx context.Context, c Caller, head int64) (*projection, error) {
	id := identity(c)
	if !h.cfg.Stateless {
		h.mu.Lock()
		p := h.projections[id]
		h.mu.Unlock()
		if p != nil && p.head == head {
			return p, nil
		}
	}
	tools, err := h.project(ctx, c)
	if err != nil {
		return nil, err
	}
	p := &projection{head: head, tools: tools, fps: make(map[string]string, len(tools))}
	for _, t := range tools {
		p.fps[t.key] = t.fp
	}
	if !h.cfg.Stateless {
		h.mu.Lock()
		if cur := h.projections[id]; cur == nil || cur.head <= head {
			h.projections[id] = p
		}
		h.mu.Unlock()
	}
	return p, nil
}

// newSession builds the server for caller: the meta-tools and the caller's
// projection of the directory, answering tools/list in pages of pageSize
// tools (0: all at once).
func (h *Handler) newSession(ctx context.Context, c Caller, r *http.Request, pageSize int, stateless bool) (*session, error) {
	now := time.Now()
	st := h.bareSession(c, r)
	st.created, st.last = now, now
	st.handler = st.handle
	var head int64
	if !h.cfg.Stateless { // the worker's server is never re-projected
		var err error
		if head, err = h.head(ctx); err != nil {
			return nil, err
		}
	}
	// A stateless tools/call of a row's tool needs that tool alone: its
	// server lists nothing else, so the call costs the same in a directory
	// of ten rows or ten thousand (the projection is a query and a tool
	// definition for each row listed).
	key, one := "", false
	if stateless {
		key, one = calledRow(r)
	}
	proj := &projection{}
	if !one {
		var err error
		if proj, err = h.projectionFor(ctx, c, head); err != nil {
			return nil, err
		}
	}
	opts := &sdk.ServerOptions{
		Instructions: h.instructions(),
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: !h.cfg.Stateless},
			Resources: &sdk.ResourceCapabilities{}, // the contract resources (surface.go): no resources/list_changed
			Prompts:   &sdk.PromptCapabilities{}},  // prompts/list is answered, empty: a directory offers no prompts
		PageSize:     pageSize, // 0: the SDK's default, MaxPageSize, past any MaxTools in use
		SetCacheable: cacheHints,
		// completion/complete of a contract resource's key (surface.go)
		CompletionHandler: st.complete,
	}
	if !h.cfg.Stateless { // the worker has no stream to tell a subscriber on
		opts.SubscribeHandler, opts.UnsubscribeHandler = st.subscribe, st.unsubscribe
	}
	if !stateless {
		opts.GetSessionID = func() string {
			id := rand.Text()
			h.register(id, st)
			return id
		}
	}
	st.server = sdk.NewServer(h.implementation(), opts)
	st.server.AddTool(searchTool, st.handler)
	st.server.AddTool(callTool, st.handler)
	st.addResources(st.server, pageSize)
	for _, t := range proj.tools {
		st.server.AddTool(t.tool, st.handler)
	}
	if one {
		if row := st.lookup(ctx, key); row != nil {
			st.server.AddTool(rowTool(row).tool, st.handler)
		}
	}
	if !stateless {
		st.server.AddReceivingMiddleware(st.unlisted)
	}
	st.proj = proj
	return st, nil
}

// unlisted lets a session's tools/call reach a row the caller may see but
// its tools/list leaves out (past Config.MaxTools): the SDK knows only the
// listed tools, and would answer unknown tool. A name that is no row the
// caller may see is still the SDK's to refuse.
func (st *session) unlisted(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		name := call.Params.Name
		if name == SearchTool || name == CallTool || st.listed(name) || st.lookup(ctx, name) == nil {
			return next(ctx, method, req)
		}
		res, err := st.handle(ctx, call)
		if err == nil && res.Content == nil {
			res.Content = []sdk.Content{} // as the SDK's callTool: no "null"
		}
		return res, err
	}
}

// handle is every tool of the session, for the SDK: the meta-tools by name,
// else the row listed as the tool.
func (st *session) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	args := req.Params.Arguments
	ctx = withProgress(ctx, req) // flow steps and agent rounds report to a progressToken
	a := askedOf(req)
	ctx = withAsked(ctx, a)
	var res *sdk.CallToolResult
	switch name := req.Params.Name; name {
	case SearchTool:
		res = st.search(ctx, args)
	case CallTool:
		res = st.callCapability(ctx, args)
	default:
		res = st.callRow(ctx, name, args)
	}
	if a.err != nil { // URLElicitationRequiredError (approval.go)
		return nil, a.err
	}
	return res, nil
}

func (h *Handler) instructions() string {
	listed := fmt.Sprintf("up to %d of them are listed as tools (named by key)", h.cfg.MaxTools)
	if h.cfg.MaxTools < 0 {
		listed = "none is listed as its own tool"
	}
	return "rowcall: a directory of capabilities, each one row called by its key; " + listed +
		". search_capabilities finds any capability by plain words and says how to call it; call_capability calls it by key. " +
		"Every call writes a signed public receipt, named in the result."
}

// touch records the latest request's caller on the session, and the base of
// its receipt links.
func (st *session) touch(c Caller, r *http.Request) {
	links, base := st.h.links(r), st.h.base(r)
	st.mu.Lock()
	st.caller, st.links, st.baseURL = c, links, base
	st.mu.Unlock()
}

// links is what receipt links start with for a request made as r ("": none).
func (h *Handler) links(r *http.Request) string {
	if h.cfg.ReceiptBase == nil {
		return ""
	}
	return h.cfg.ReceiptBase(r)
}

// base is the host's public address for a request made as r ("": unknown).
// bareSession is a session for caller c as of request r, without its
// server: what a stateless request's fast path needs (its links and the
// host's public address, for receipts and approvals), and what newSession
// builds on.
func (h *Handler) bareSession(c Caller, r *http.Request) *session {
	return &session{h: h, identity: identity(c), caller: c, links: h.links(r), baseURL: h.base(r)}
}

func (h *Handler) base(r *http.Request) string {
	if h.cfg.Base == nil {
		return ""
	}
	return h.cfg.Base(r)
}

// current returns the caller, and the receipt link maker for the latest request.
func (st *session) current() (Caller, func(id string) string) {
	st.mu.Lock()
	c, links := st.caller, st.links
	st.mu.Unlock()
	return c, func(id string) string {
		if id == "" || links == "" {
			return ""
		}
		return links + id
	}
}

// begin and end bracket a POST on the session: the idle time counts from
// the end of the last one (as the SDK's SessionTimeout did).
func (st *session) begin() {
	st.mu.Lock()
	st.busy++
	st.mu.Unlock()
}

func (st *session) end() {
	st.mu.Lock()
	st.busy--
	st.last = time.Now()
	st.mu.Unlock()
}

// idle reports whether the session has had no request for d.
func (st *session) idle(d time.Duration) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.busy == 0 && time.Since(st.last) >= d
}

// close ends the session's SDK session (its streams too).
func (st *session) close() {
	for ss := range st.server.Sessions() {
		ss.Close()
	}
}

func (st *session) listed(key string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.proj == nil { // a stateless call's session: never projected
		return false
	}
	_, ok := st.proj.fps[key]
	return ok
}

// streamReady is called once the SDK has attached a GET stream (written its
// 200): a change that found no stream is announced now. The SDK sends
// list_changed whenever a tool is (re)added, so re-adding a meta-tool is the
// announcement.
func (st *session) streamReady() {
	st.mu.Lock()
	st.ready = true
	missed, completed := st.missed, st.completed
	st.missed, st.completed = false, nil
	st.mu.Unlock()
	if missed {
		st.server.AddTool(searchTool, st.handler)
	}
	st.notifyComplete(completed...)
}

func (st *session) streamEnded() {
	st.mu.Lock()
	st.ready = false
	st.mu.Unlock()
}

// alive reports whether the session may still be used: it is young (being
// initialized) or its server still has a connected session.
func (st *session) alive() bool {
	if time.Since(st.created) < 10*time.Second {
		return true
	}
	for range st.server.Sessions() {
		return true
	}
	return false
}

// apply brings the session's tools to p: the SDK sends one list_changed for
// the changes.
func (st *session) apply(p *projection) {
	st.mu.Lock()
	var changed []projected
	for _, t := range p.tools {
		if st.proj.fps[t.key] != t.fp {
			changed = append(changed, t)
		}
	}
	var removed []string
	for k := range st.proj.fps {
		if _, ok := p.fps[k]; !ok {
			removed = append(removed, k)
		}
	}
	st.proj = p
	if len(changed)+len(removed) > 0 && !st.ready {
		st.missed = true // announced when a stream attaches
	}
	st.mu.Unlock()
	if len(removed) > 0 {
		st.server.RemoveTools(removed...)
	}
	for _, t := range changed {
		st.server.AddTool(t.tool, st.handler)
	}
}

// head is the event log's last id: every directory change, through the API or
// straight in SQL, appends an event (migrations/0003_events.sql), so a new
// head means the directory may have changed.
func (h *Handler) head(ctx context.Context) (int64, error) { return h.cfg.Store.LastEvent(ctx) }

// poll runs while sessions are open: every Config.Poll it reads the event
// log's head and re-projects each session that has not seen it (once per
// credential), dropping sessions that have ended.
func (h *Handler) poll() {
	t := time.NewTicker(h.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		if !h.tick() {
			return
		}
	}
}

// tick is one poll; false when no session is left (the poller stops).
func (h *Handler) tick() bool {
	h.mu.Lock()
	live := make([]*session, 0, len(h.sessions))
	var idle []*session
	for id, st := range h.sessions {
		switch {
		case st.idle(h.cfg.Idle): // closed below, as the SDK's SessionTimeout did
			idle = append(idle, st)
			delete(h.sessions, id)
		case !st.alive():
			delete(h.sessions, id)
		default:
			live = append(live, st)
		}
	}
	stop := len(live) == 0
	if stop {
		h.polling = false
	}
	held := make(map[string]bool, len(live))
	for _, st := range live {
		held[st.identity] = true
	}
	for id := range h.projections { // a credential without sessions keeps no projection
		if !held[id] && h.pending[id] == 0 {
			delete(h.projections, id)
		}
	}
	h.mu.Unlock()
	for _, st := range idle {
		st.close()
	}
	if stop {
		return false
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	head, err := h.head(ctx)
	if err != nil {
		slog.Warn("mcp: reading the event log", "err", err)
		return true
	}
	for _, st := range live {
		st.mu.Lock()
		stale, c := st.proj.head < head, st.caller
		st.mu.Unlock()
		if !stale {
			continue
		}
		p, err := h.projectionFor(ctx, c, head) // once per credential: its other sessions share it
		if err != nil {
			slog.Warn("mcp: projecting the directory", "err", err)
			continue
		}
		st.apply(p)
		st.updated(ctx)
	}
	return true
}
