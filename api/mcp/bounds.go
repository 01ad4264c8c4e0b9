package mcp

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall"
)

// admit makes room for a new session of the credential identity: past its
// cap (Config.SessionsPerCredential), or past Config.MaxSessions, the least
// recently used idle session (of that credential first) is closed; when none
// is idle the initialize is refused. An admitted session counts as pending
// until the SDK registers it (register) or its initialize ends (release).
func (h *Handler) admit(identity string) error {
	h.mu.Lock()
	var evicted []*session
	mine := h.pending[identity]
	for _, st := range h.sessions {
		if st.identity == identity {
			mine++
		}
	}
	var err error
	if mine >= h.cfg.SessionsPerCredential {
		if st := h.leastRecent(identity); st != nil {
			evicted = append(evicted, st)
		} else {
			err = tooMany("this credential has "+strconv.Itoa(h.cfg.SessionsPerCredential)+" MCP sessions open, each serving a request",
				"close a session you no longer use (DELETE /mcp with its Mcp-Session-Id), or wait for one to finish; the host's operator sets the cap (--mcp-sessions-per-credential)")
		}
	}
	if err == nil && len(h.sessions)+h.pendingAll >= h.cfg.MaxSessions {
		if st := h.leastRecent(""); st != nil {
			evicted = append(evicted, st)
		} else {
			err = tooMany("the host has "+strconv.Itoa(h.cfg.MaxSessions)+" MCP sessions open, each serving a request",
				"try again shortly; the host's operator sets the cap (--mcp-sessions)")
		}
	}
	if err == nil {
		h.pending[identity]++
		h.pendingAll++
	}
	h.mu.Unlock()
	for _, st := range evicted {
		st.close()
	}
	return err
}

func tooMany(msg, fix string) error {
	return &rowcall.Error{Code: ETooManySessions, Status: http.StatusTooManyRequests, Message: msg, HowToFix: fix}
}

// leastRecent removes and returns the session of identity ("": any) that has
// waited longest since its last request, among those serving none (nil when
// every one is busy). h.mu is held.
func (h *Handler) leastRecent(identity string) *session {
	var oldest *session
	for _, st := range h.sessions {
		if identity != "" && st.identity != identity {
			continue
		}
		st.mu.Lock()
		busy, last := st.busy > 0, st.last
		st.mu.Unlock()
		if !busy && (oldest == nil || last.Before(oldest.last)) {
			oldest = st
		}
	}
	if oldest != nil {
		delete(h.sessions, oldest.id)
	}
	return oldest
}

// unreserve ends st's pending admission (h.mu is held).
func (h *Handler) unreserve(st *session) {
	if !st.reserved {
		return
	}
	st.reserved = false
	h.pendingAll--
	if h.pending[st.identity]--; h.pending[st.identity] <= 0 {
		delete(h.pending, st.identity)
	}
}

// release ends st's pending admission if the SDK did not register it (its
// initialize failed).
func (h *Handler) release(st *session) {
	h.mu.Lock()
	h.unreserve(st)
	h.mu.Unlock()
}

// CORS for a browser-based client: what a page of an allowed origin may send
// to /mcp and read of its answers.
const (
	corsMethods = "GET, POST, DELETE, OPTIONS"
	corsHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, X-Terminal-Key"
	corsExpose  = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
)

// checkOrigin lets a request through unless a browser sent it from an
// origin allowedOrigin refuses (403). A request from an allowed origin gets
// the CORS headers (the origin itself, never *: the answer depends on it),
// and its preflight is answered here, before any credential is asked for.
// It reports whether the request goes on.
func (h *Handler) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	if !h.allowedOrigin(o, r) {
		h.cfg.Fail(w, r, &rowcall.Error{Code: rowcall.EForbidden, Status: http.StatusForbidden,
			Message:  "/mcp does not answer pages of the web origin " + strconv.Quote(o) + " (a browser sends Origin; programs send none)",
			HowToFix: "call /mcp from a program, or from a page of this host's public URL, or add the origin to ROWCALL_MCP_ORIGINS (--mcp-origins)"})
		return false
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", o)
	hd.Add("Vary", "Origin")
	hd.Set("Access-Control-Expose-Headers", corsExpose)
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return true
	}
	allow := corsHeaders
	for _, name := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		if name = strings.TrimSpace(name); len(name) > len("mcp-param-") && strings.EqualFold(name[:len("mcp-param-")], "mcp-param-") {
			allow += ", " + name // the per-request protocol's parameter headers
		}
	}
	hd.Set("Access-Control-Allow-Methods", corsMethods)
	hd.Set("Access-Control-Allow-Headers", allow)
	hd.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return false
}

// allowedOrigin reports whether a page of the web origin o may call /mcp:
// loopback (any port), this host's public URL (Config.Base), or one of
// Config.Origins.
func (h *Handler) allowedOrigin(o string, r *http.Request) bool {
	o, ok := origin(o)
	if !ok {
		return false // "null", or not an origin
	}
	if u, _ := url.Parse(o); u != nil && loopback(u.Hostname()) {
		return true
	}
	if h.origins[o] {
		return true
	}
	if h.cfg.Base != nil {
		if base, ok := origin(h.cfg.Base(r)); ok && base == o {
			return true
		}
	}
	return false
}

// IsOrigin reports whether o is a web origin (scheme://host[:port], http or
// https), as Limits.Origins takes.
func IsOrigin(o string) bool {
	_, ok := origin(o)
	return ok
}

// origin is u's web origin, scheme://host[:port] in lower case without a
// default port (false when u is not an http or https URL).
func origin(u string) (string, bool) {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", false
	}
	scheme, host, port := p.Scheme, strings.ToLower(p.Hostname()), p.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// loopback reports whether host names this machine: localhost (and its
// subdomains) or a loopback address.
func loopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
