package mcp

import (
	"context"
	"crypto/rand"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The per-request protocol (2026-07-28 and later, SEP-2575) beside the
// sessions of 2025-11-25: a request without Mcp-Session-Id whose
// MCP-Protocol-Version header names the newer protocol carries its version,
// client info and capabilities in its own _meta, so it is answered by a
// server built for it alone (the caller's projection, no session kept), as
// the worker answers every request. server/discover is one such request.
// The SDK's stateful handler refuses these (it accepts them only when
// stateless), so a host keeps a second, stateless SDK handler for them.

// On a host, a subscriptions/listen request (the newer protocol's
// notification stream) keeps its server registered with the poller while it
// is open, so a directory change reaches it as list_changed, as it reaches a
// session's GET stream.

// ListTTL is the cache hint (ttlMs) on tools/list, resources/list,
// resources/templates/list and resources/read answers: a client may reuse
// an answer this long before asking again. Scope is private: each answer
// is the caller's projection. On a session, list_changed still announces a
// change at once.
const ListTTL = 30 * time.Second

// cacheHints is ServerOptions.SetCacheable: every list and read is the
// caller's own, fresh for ListTTL.
func cacheHints(_ context.Context, _ sdk.Request, c *sdk.Cacheable) {
	c.TTLMs = int(ListTTL / time.Millisecond)
	c.CacheScope = "private"
}

// statelessRequest reports whether r is answered without a session: a POST
// of the per-request protocol, or any POST when stateless (the worker).
func (h *Handler) statelessRequest(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	return h.cfg.Stateless || (r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("MCP-Protocol-Version") >= newestProtocol)
}

// transport returns the SDK handler that serves r: the stateless one for a
// per-request protocol request on a host that keeps sessions.
func (h *Handler) transport(r *http.Request) http.Handler {
	if h.perReq != nil && !h.cfg.Stateless && h.statelessRequest(r) {
		return h.perReq
	}
	return h.sdk
}

// listen registers st with the poller for the length of a
// subscriptions/listen request; the returned func unregisters it.
func (h *Handler) listen(st *session) func() {
	id := "listen:" + rand.Text()
	st.mu.Lock()
	st.ready = true // the stream is the request itself
	st.mu.Unlock()
	h.register(id, st)
	return func() { h.drop(id) }
}
