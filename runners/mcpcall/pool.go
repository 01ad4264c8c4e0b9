package mcpcall

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	refs   int  // calls using the session (pool.mu)
	gone   bool // out of the pool: closed when its last call ends (pool.mu)
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

// get returns the pooled session for key, or connects one; the caller
// gives it back with release.
func (p *pool) get(ctx context.Context, key string, u *url.URL, h http.Header) (*httpSession, error) {
	now := time.Now()
	p.mu.Lock()
	s := p.sessions[key]
	if s != nil {
		s.last = now
		s.refs++
	}
	for k, o := range p.sessions { // idle sessions go on any visit
		if now.Sub(o.last) > p.cfg.Idle {
			delete(p.sessions, k)
			p.retire(o)
		}
	}
	p.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := p.connect(ctx, u, h)
	if err != nil {
		return s, err
	}
	s.last, s.refs = now, 1
	p.mu.Lock()
	if old := p.sessions[key]; old != nil { // another call connected first: keep one
		old.refs++
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

// release gives back a session get returned: one out of the pool is closed
// when no call uses it any more.
func (p *pool) release(s *httpSession) {
	p.mu.Lock()
	s.refs--
	closing := s.gone && s.refs == 0
	p.mu.Unlock()
	if closing {
		go s.cs.Close()
	}
}

// retire marks s, already out of the map, to be closed: now when no call
// uses it, else by the last call's release (closing a session ends every
// request on it, so a session is never closed under another call); p.mu is
// held.
func (p *pool) retire(s *httpSession) {
	if s.gone {
		return
	}
	s.gone = true
	if s.refs == 0 {
		go s.cs.Close()
	}
}

// evictOldest retires the least recently used session; p.mu is held.
func (p *pool) evictOldest() {
	var oldest string
	for k, o := range p.sessions {
		if oldest == "" || o.last.Before(p.sessions[oldest].last) {
			oldest = k
		}
	}
	if o := p.sessions[oldest]; o != nil {
		delete(p.sessions, oldest)
		p.retire(o)
	}
}

// drop takes s out of the pool (the server expired it, or it broke); the
// next call for key connects anew, and s is closed once no call uses it.
func (p *pool) drop(key string, s *httpSession) {
	p.mu.Lock()
	if p.sessions[key] == s {
		delete(p.sessions, key)
	}
	p.retire(s)
	p.mu.Unlock()
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
	if fail, _ := r.authorized(ctx, key, t.URL, auth, env, func(ctx context.Context, s *httpSession, secrets []string) (err error) {
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
// auth, with a context that records what f's requests got (sent). On
// failure, ref is the server's refusal, if any, and err the transport's own
// error when there was one.
//
// A call ends its session only when the session failed it: a call whose
// context ended (its client cancelled it, or it timed out) leaves the
// session to the other calls on it (its request was cancelled upstream,
// fast.go), as does a JSON-RPC error the server answered. A session that
// failed is taken out of the pool (drop) and closed once no call uses it,
// and the call runs once more on a new session when it cannot have reached
// the tool (retryable).
func (r *Runner) onHTTP(ctx context.Context, auth httpcall.Authorized, f func(context.Context, *httpSession) error) (ref refusal, err error) {
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
		in := s.inject
		ref.status = int(in.status.Load()) // the session's initialize
		if err == nil {
			a := &sent{}
			err = f(context.WithValue(ctx, sentKey{}, a), s)
			if !r.cfg.NoPool {
				if err != nil && !a.keeps(ctx, err) {
					r.pool.drop(key, s)
				}
				r.pool.release(s)
			}
			if err == nil {
				return refusal{}, nil
			}
			ref.status = int(a.status.Load())
			if a.retryable(err, s.cs.ID()) && attempt == 0 && ctx.Err() == nil {
				continue
			}
			if cause := a.cause.Load(); cause != nil {
				err = *cause // the SDK reports a transport failure in its own words ("rejected by transport")
			}
		} else if cause := in.cause.Load(); cause != nil {
			err = *cause
		}
		if ref.status != 401 && ref.status != 403 {
			ref.status = 0
		}
		if ref.status == 401 {
			auth.Forget()
			if c := in.challenge.Load(); c != nil {
				ref.challenge = *c
			}
		}
		return ref, err
	}
}

// sent is what one call's requests on a session got, recorded by inject:
// whether any was sent, the first one's status, and the last transport
// error. It is the call's own (a session's other calls run at once).
type sent struct {
	posted atomic.Bool
	status atomic.Int32
	cause  atomic.Pointer[error]
}

type sentKey struct{}

// keeps reports whether a call's failure leaves its session to other
// calls: the call's context ended, or the server answered the request.
func (a *sent) keeps(ctx context.Context, err error) bool {
	return ctx.Err() != nil || a.answered(err)
}

// answered reports whether the server read the request and answered it
// with a JSON-RPC error: in a 2xx, or in a 4xx whose error is one of the
// request itself (parse error, invalid request, method not found, invalid
// params: a stateless server answers an unknown tool with 400), not of the
// session.
func (a *sent) answered(err error) bool {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return false
	}
	return a.status.Load()/100 == 2 || (we.Code >= jsonrpc.CodeParseError && we.Code <= jsonrpc.CodeInvalidRequest)
}

// retryable reports whether a failed call cannot have reached the tool, so
// it may run again on a new session: nothing was sent (the session had
// failed or closed before), or the server refused the request on a session
// before handling it, 404 for a session it no longer has or 400 (a server
// that keeps sessions in a map answers an unknown one so). session is the
// session's id, "" on a server that keeps none.
func (a *sent) retryable(err error, session string) bool {
	if errors.Is(err, sdk.ErrSessionMissing) || !a.posted.Load() {
		return true
	}
	st := a.status.Load()
	return session != "" && (st == http.StatusNotFound || st == http.StatusBadRequest) && !a.answered(err)
}

// notListing marks a request's context as the fast path's (fast.go): not a
// tools/list, so inject does not read its body to find out, and its event
// streams read by the fast path itself, as they came.
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
	a, _ := req.Context().Value(sentKey{}).(*sent)
	if a != nil && req.Method == http.MethodPost {
		a.posted.Store(true)
	}
	resp, err := in.next.RoundTrip(req)
	if err != nil {
		in.cause.Store(&err)
		if a != nil {
			a.cause.Store(&err)
		}
		return resp, err
	}
	if a != nil && req.Method == http.MethodPost {
		a.status.CompareAndSwap(0, int32(resp.StatusCode))
	}
	if resp.StatusCode == 401 || resp.StatusCode == 403 {
		in.status.Store(int32(resp.StatusCode))
	}
	if c := resp.Header.Values("WWW-Authenticate"); resp.StatusCode == 401 {
		in.challenge.Store(&c)
	}
	// The server's own stream (GET) carries one event after another for
	// the session's life: the cap holds for each event, not the stream.
	c := &capped{r: resp.Body, left: in.max, in: in, sent: a, perEvent: req.Method == http.MethodGet}
	resp.Body = c
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" && req.Context().Value(notListing{}) == nil {
		// The SDK reads this stream: in the plain form its reader takes (sse.go).
		var ended func()
		if c.perEvent {
			ended = func() { c.left = in.max }
		}
		resp.Body = newCanonicalSSE(c, ended)
	}
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
	sent     *sent // the call the body answers, nil for the session's own requests
	perEvent bool  // the cap starts again after each event (a blank line)
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.in.cause.Store(&errTooLarge)
			if c.sent != nil {
				c.sent.cause.Store(&errTooLarge)
			}
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
