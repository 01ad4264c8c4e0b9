package mcpcall

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/httpcall"
)

// newClient is the MCP client sessions with server are made by: it tells
// changed (when not nil) that the server sent notifications/tools/list_changed,
// and passes an HTTP server's progress notifications on to their calls (relay).
// It declares no capability, roots included (the SDK's default declares
// roots): a row's call is made for whoever holds the token, not from a
// workspace, so rowcall has no roots to give, and a server told it has them
// asks for them when it needs them (server-everything's get-roots-list then
// waited 30 s for a list sent on a stream the pooled session may not hold).
func newClient(server string, changed func(server string)) *sdk.Client {
	o := &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}}
	if !strings.HasPrefix(server, "stdio:") { // a stdio session's are relayed as read (recording)
		o.ProgressNotificationHandler = func(_ context.Context, req *sdk.ProgressNotificationClientRequest) { relay(server, req.Params) }
	}
	if changed != nil {
		o.ToolListChangedHandler = func(context.Context, *sdk.ToolListChangedRequest) { changed(server) }
	}
	return sdk.NewClient(&sdk.Implementation{Name: "rowcall", Version: "1"}, o)
}

// resumeRetries bounds the reconnections of one response stream (connect).
const resumeRetries = 2

// pool holds HTTP sessions by server and credential.
type pool struct {
	cfg      Config
	mu       sync.Mutex
	sessions map[string]*httpSession
}

// httpSession is one initialized session with one server under one credential.
type httpSession struct {
	cs     *sdk.ClientSession
	inject *inject
	client *http.Client // the session's client: inject over the runner's transport
	url    string
	ids    atomic.Int64 // the fast path's request ids (fast.go)
	last   time.Time
}

func newPool(cfg Config) *pool { return &pool{cfg: cfg, sessions: map[string]*httpSession{}} }

// poolKey is the server's URL and a hash of the credential headers.
func poolKey(u *url.URL, h http.Header) string {
	sum := sha256.New()
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range h[k] {
			sum.Write([]byte(k + "\x00" + v + "\x00"))
		}
	}
	return u.String() + "\x00" + hex.EncodeToString(sum.Sum(nil))
}

// get returns the pooled session for key, or connects one.
func (p *pool) get(ctx context.Context, key string, u *url.URL, h http.Header) (*httpSession, error) {
	now := time.Now()
	p.mu.Lock()
	s := p.sessions[key]
	if s != nil {
		s.last = now
	}
	var stale []*httpSession
	for k, o := range p.sessions { // idle sessions go on any visit
		if now.Sub(o.last) > p.cfg.Idle {
			stale = append(stale, o)
			delete(p.sessions, k)
		}
	}
	p.mu.Unlock()
	for _, o := range stale {
		go o.cs.Close()
	}
	if s != nil {
		return s, nil
	}
	s, err := p.connect(ctx, u, h)
	if err != nil {
		return s, err
	}
	s.last = now
	p.mu.Lock()
	if old := p.sessions[key]; old != nil { // another call connected first: keep one
		p.mu.Unlock()
		go s.cs.Close()
		return old, nil
	}
	if len(p.sessions) >= p.cfg.MaxSessions {
		p.evictOldest()
	}
	p.sessions[key] = s
	p.mu.Unlock()
	return s, nil
}

// evictOldest closes the least recently used session; p.mu is held.
func (p *pool) evictOldest() {
	var oldest string
	for k, o := range p.sessions {
		if oldest == "" || o.last.Before(p.sessions[oldest].last) {
			oldest = k
		}
	}
	if o := p.sessions[oldest]; o != nil {
		delete(p.sessions, oldest)
		go o.cs.Close()
	}
}

// drop forgets s (the server expired it, or its connection broke).
func (p *pool) drop(key string, s *httpSession) {
	p.mu.Lock()
	if p.sessions[key] == s {
		delete(p.sessions, key)
	}
	p.mu.Unlock()
	go s.cs.Close()
}

func (p *pool) closeAll() {
	p.mu.Lock()
	all := p.sessions
	p.sessions = map[string]*httpSession{}
	p.mu.Unlock()
	for _, s := range all {
		s.cs.Close()
	}
}

// connect initializes a new session with the server at u, the credential h
// injected on requests to u's origin only.
func (p *pool) connect(ctx context.Context, u *url.URL, h http.Header) (*httpSession, error) {
	base := p.cfg.Client
	if base == nil {
		base = &http.Client{}
	}
	next := base.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	in := &inject{next: next, origin: origin(u), header: h, max: p.cfg.MaxResponse}
	c := *base
	c.Transport = in
	// A response stream the server ends after an event id is resumed with a
	// GET carrying Last-Event-ID after the server's retry delay (SSE
	// polling, 2025-11-25), at most resumeRetries times without progress; a
	// stream without event ids cannot be resumed and fails the call at once.
	// A pooled session listens on the server's stream for list_changed
	// (Config.OnToolsChanged); a session made for one call does not.
	listen := p.cfg.OnToolsChanged != nil && !p.cfg.NoPool
	t := &sdk.StreamableClientTransport{Endpoint: u.String(), HTTPClient: &c, MaxRetries: resumeRetries, DisableStandaloneSSE: !listen}
	var changed func(string)
	if listen {
		changed = p.cfg.OnToolsChanged
	}
	cs, err := newClient(u.String(), changed).Connect(ctx, t, nil)
	if err != nil {
		return &httpSession{inject: in}, err
	}
	return &httpSession{cs: cs, inject: in, client: &c, url: u.String()}, nil
}

// callHTTP calls the tool on the pooled session for the row's server and
// credential.
func (r *Runner) callHTTP(ctx context.Context, key string, t Target, auth string, env rowcall.Env, arguments json.RawMessage) rowcall.Output {
	var out rowcall.Output
	if fail := r.authorized(ctx, key, t.URL, auth, env, func(s *httpSession, secrets []string) (err error) {
		res, err := r.callTool(ctx, s, t.Tool, arguments)
		out, err = r.output(ctx, res, err, secrets)
		return err
	}); fail.Failed() {
		return fail
	}
	out.Status = 200
	return out
}

// refusal is how the server refused a request: a 401 or 403 (0 otherwise),
// and a 401's WWW-Authenticate challenges.
type refusal struct {
	status    int
	challenge []string
}

// onHTTP runs f on the pooled session for the server and credential in
// auth, connecting again once when the server has expired the session. On
// failure, ref is the server's refusal, if any, and err the transport's own
// error when there was one.
func (r *Runner) onHTTP(ctx context.Context, auth httpcall.Authorized, f func(*httpSession) error) (ref refusal, err error) {
	key := poolKey(auth.URL, auth.Header)
	for attempt := 0; ; attempt++ {
		var s *httpSession
		if r.cfg.NoPool {
			s, err = r.pool.connect(ctx, auth.URL, auth.Header)
			if err == nil {
				defer s.cs.Close()
			}
		} else {
			s, err = r.pool.get(ctx, key, auth.URL, auth.Header)
		}
		if err == nil {
			if err = f(s); err == nil {
				return refusal{}, nil
			}
			if !r.cfg.NoPool {
				r.pool.drop(key, s)
			}
		}
		ref.status = int(s.inject.status.Load())
		if ref.status == 401 {
			auth.Forget()
			if c := s.inject.challenge.Load(); c != nil {
				ref.challenge = *c
			}
		}
		if attempt == 0 && errors.Is(err, sdk.ErrSessionMissing) && ctx.Err() == nil {
			continue // the server expired the session: initialize anew, send once more
		}
		if cause := s.inject.cause.Load(); cause != nil {
			err = *cause // the SDK reports a transport failure in its own words ("rejected by transport")
		}
		return ref, err
	}
}

// notListing marks a request's context as one that is not a tools/list
// (the fast path's messages), so inject does not read its body to find out.
type notListing struct{}

// inject puts the row's credential on requests to the server's origin, caps
// every response body, and remembers a 401 or 403.
type inject struct {
	next      http.RoundTripper
	origin    string
	header    http.Header
	max       int64
	status    atomic.Int32
	challenge atomic.Pointer[[]string] // a 401's WWW-Authenticate values
	cause     atomic.Pointer[error]    // the last transport error (a refused dial, a body over the cap); errors of any type
	schemas   schemas
}

func (in *inject) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(in.header) > 0 && origin(req.URL) == in.origin {
		req = req.Clone(req.Context())
		for k, v := range in.header {
			req.Header[k] = slices.Clone(v)
		}
	}
	listing := false
	if req.Method == http.MethodPost && req.GetBody != nil && req.Context().Value(notListing{}) == nil {
		if b, err := req.GetBody(); err == nil {
			sent, _ := io.ReadAll(io.LimitReader(b, 4096))
			listing = gjson.GetBytes(sent, "method").String() == "tools/list"
		}
	}
	resp, err := in.next.RoundTrip(req)
	if err != nil {
		in.cause.Store(&err)
		return resp, err
	}
	if resp.StatusCode == 401 || resp.StatusCode == 403 {
		in.status.Store(int32(resp.StatusCode))
	}
	if c := resp.Header.Values("WWW-Authenticate"); resp.StatusCode == 401 {
		in.challenge.Store(&c)
	}
	// The server's own stream (GET) carries one event after another for
	// the session's life: the cap holds for each event, not the stream.
	resp.Body = &capped{r: resp.Body, left: in.max, in: in, perEvent: req.Method == http.MethodGet}
	if listing && resp.StatusCode == http.StatusOK {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			in.schemas.recordBody(body)
		}
		resp.Body = readErr{bytes.NewReader(body), err}
	}
	return resp, nil
}

// readErr is a body read ahead: its bytes, then the error that ended them.
type readErr struct {
	r   *bytes.Reader
	err error
}

func (b readErr) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (readErr) Close() error { return nil }

// errTooLarge ends a response body past the cap.
var errTooLarge = errors.New("mcp response larger than the runner's cap")

type capped struct {
	r        io.ReadCloser
	left     int64
	in       *inject
	perEvent bool // the cap starts again after each event (a blank line)
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.in.cause.Store(&errTooLarge)
			return 0, errTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.perEvent {
		if i := bytes.LastIndex(p[:n], []byte("\n\n")); i >= 0 {
			c.left = c.in.max - int64(n-i-2)
		}
	}
	return n, err
}

func (c *capped) Close() error { return c.r.Close() }

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }
