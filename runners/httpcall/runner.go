package httpcall

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
)

// Defaults for Config's zero values.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxResponse = 1 << 20 // 1 MiB
)

// Config configures a Runner.
type Config struct {
	// Client sends every request, token requests included. The host passes
	// outbound.Policy.Client; nil means a plain client with no outbound policy.
	Client *http.Client
	// Timeout bounds one call from first byte to last; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxResponse caps a response body in bytes; 0 means DefaultMaxResponse.
	MaxResponse int64
	// UserAgent is sent (and shown in shape plans) when not empty.
	UserAgent string
	// Now is the token cache's clock; nil means time.Now.
	Now func() time.Time
	// Self returns this host's base URL for the call in ctx, the value of
	// $SELF in a row (args' package doc); nil leaves $SELF unresolved. The
	// host pairs it with an outbound.Self transport in Client, so those
	// calls are served in-process.
	Self func(ctx context.Context) string
}

// Runner runs http rows. It is safe for concurrent use.
type Runner struct {
	client  *http.Client
	timeout time.Duration
	max     int64
	agent   string
	tokens  *tokenCache
	self    func(context.Context) string
}

var _ rowcall.Runner = (*Runner)(nil)

// New returns a Runner with cfg, zero fields replaced by their defaults.
func New(cfg Config) *Runner {
	r := &Runner{client: cfg.Client, timeout: cfg.Timeout, max: cfg.MaxResponse, agent: cfg.UserAgent, self: cfg.Self}
	if r.client == nil {
		r.client = &http.Client{}
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	if r.max <= 0 {
		r.max = DefaultMaxResponse
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	r.tokens = newTokenCache(now)
	return r
}

// Run executes one invocation of an http row. Failures are rowcall.Failure values.
func (r *Runner) Run(ctx context.Context, inv *rowcall.Invocation) rowcall.Output {
	if inv == nil || inv.Row == nil {
		return rowcall.Fail("http", "bad_target", "no row").Output()
	}
	c, fail := r.build(ctx, r.withSelf(ctx, inv))
	if fail != nil {
		return fail.Output()
	}
	if inv.Shape {
		return c.shape()
	}
	return r.send(ctx, inv.Row.Key, c)
}

// send performs the call built in c.
func (r *Runner) send(parent context.Context, key string, c *call) rowcall.Output {
	ctx, cancel := context.WithTimeout(parent, r.timeout)
	defer cancel()
	tokenKey, out := r.token(parent, ctx, "http", key, c)
	if out.Failed() {
		return out
	}
	req, err := c.request(ctx)
	if err != nil {
		out.Fails(rowcall.Fail("http", "bad_target", redact.String(err.Error(), c.secrets)))
		return out
	}
	resp, err := r.client.Do(req)
	if err != nil {
		out.Fails(rowcall.Fail("http", "fetch", r.failure(parent, ctx, err, c.secrets)))
		return out
	}
	defer resp.Body.Close()
	out.Status, out.Material = resp.StatusCode, true
	if resp.StatusCode == http.StatusUnauthorized && tokenKey != "" {
		r.tokens.drop(tokenKey)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.max+1))
	switch {
	case err != nil:
		out.Fails(rowcall.Fail("http", "fetch", r.failure(parent, ctx, err, c.secrets)))
	case int64(len(body)) > r.max:
		out.Fails(tooLarge(r.max, resp.StatusCode))
	case resp.StatusCode >= 200 && resp.StatusCode < 400:
		out.Result = "HTTP " + strconv.Itoa(resp.StatusCode) + ":" + redact.String(string(body), c.secrets)
	default:
		out.Fails(rowcall.Fail("http", strconv.Itoa(resp.StatusCode), redact.String(string(body), c.secrets)))
	}
	return out
}

// token runs c's client-credentials grant, when it has one, and sets the
// token on c. tokenKey names the cached token (to drop on a 401); out carries
// c's secrets, and is the kind:key failure wrapping ERR:auth:oauth_token when
// the token endpoint failed.
func (r *Runner) token(parent, ctx context.Context, kind, key string, c *call) (tokenKey string, out rowcall.Output) {
	if c.oauth != nil {
		tok, terr := r.tokens.get(ctx, r.client, c.oauth, r.max)
		if terr != nil {
			msg, code := terr.msg, cmp.Or(terr.code, "oauth_token")
			if terr.cause != nil {
				msg = r.failure(parent, ctx, terr.cause, c.secrets)
			}
			f := rowcall.Fail("auth", code, redact.String(msg, c.secrets))
			if terr.code != "" {
				f = f.Because("the oauth: column's private_key names a variable that must hold the client's PEM private key (PKCS#8, SEC 1 or PKCS#1) fitting alg; no token was requested")
			}
			out.Fails(rowcall.Fail(kind, key).Wrapping(f))
			out.Status, out.Secrets = terr.status, c.secrets
			return "", out
		}
		c.headers.Set("Authorization", "Bearer "+tok)
		c.secrets = append(c.secrets, tok)
		tokenKey = c.oauth.cacheKey()
	}
	out.Secrets = c.secrets
	return tokenKey, out
}

func tooLarge(limit int64, status int) *rowcall.Failure {
	return rowcall.Fail("http", "too_large", strconv.FormatInt(limit, 10)+" bytes").Because("the upstream answered " +
		strconv.Itoa(status) + " with a larger body, which was not kept; ask the upstream for less or raise the runner's response cap")
}

// failure is the message for a call that got no (complete) answer.
func (r *Runner) failure(parent, ctx context.Context, err error, secrets []string) string {
	if parent.Err() == nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "timeout after " + r.timeout.String()
		}
		if r.client.Timeout > 0 && errors.Is(err, context.DeadlineExceeded) {
			return "timeout after " + r.client.Timeout.String() // the client's own, shorter timeout
		}
	}
	return redact.String(fetchMessage(err), secrets)
}

// headerMap returns the non-credential headers for a shape plan.
func headerMap(h http.Header, skip map[string]bool) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		if !skip[http.CanonicalHeaderKey(k)] {
			out[k] = strings.Join(v, ", ")
		}
	}
	return out
}
