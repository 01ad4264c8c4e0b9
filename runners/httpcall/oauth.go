package httpcall

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
)

// oauthClient is an oauth: spec with its variables read.
type oauthClient struct {
	rowcall.OAuth
	keyVar  string   // the variable PrivateKey was read from, for messages
	issuer  string   // the authorization server's issuer, when discovered: a private key's assertion names it
	secrets []string // the variables' values, redacted from the token endpoint's answers
}

// resolveOAuth reads the spec's variables. ok is false when any is missing.
func resolveOAuth(o *rowcall.OAuth, env rowcall.Env) (c *oauthClient, used []string, ok bool) {
	out := oauthClient{OAuth: rowcall.OAuth{AuthStyle: o.AuthStyle, Alg: o.Alg}, keyVar: strings.TrimPrefix(o.PrivateKey, "$")}
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&out.TokenURL, o.TokenURL}, {&out.ClientID, o.ClientID}, {&out.ClientSecret, o.ClientSecret},
		{&out.Scope, o.Scope}, {&out.Audience, o.Audience},
		{&out.PrivateKey, o.PrivateKey}, {&out.KeyID, o.KeyID}, {&out.AssertionAudience, o.AssertionAudience},
	} {
		v, u, ok := expandEnv(f.src, env)
		if !ok {
			return nil, nil, false
		}
		*f.dst = v
		used = append(used, u...)
	}
	out.secrets = used
	return &out, used, true
}

// cacheKey identifies a token: endpoint, client, scope, audience and a hash
// of the credential (never the credential itself).
func (c *oauthClient) cacheKey() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{c.ClientSecret, c.PrivateKey, c.KeyID, c.Alg, c.AssertionAudience, c.issuer}, "\x00")))
	return strings.Join([]string{c.TokenURL, c.ClientID, c.Scope, c.Audience, hex.EncodeToString(sum[:])}, "\x00")
}

// tokenError is a failed token request. status is the token endpoint's
// status when it answered, 0 when it did not (cause then holds why). code is
// the failure's code when it is not oauth_token: private_key when the
// client's key could not sign.
type tokenError struct {
	status int
	code   string
	msg    string
	cause  error
}

// tokenCache holds access tokens in memory until shortly before they expire.
type tokenCache struct {
	now     func() time.Time
	mu      sync.Mutex
	entries map[string]*tokenEntry
}

type tokenEntry struct {
	mu      sync.Mutex // held while the token is fetched, so one request serves all waiters
	token   string
	expires time.Time
}

// Token lifetimes: an answer without expires_in is kept defaultTokenLife; a
// token is dropped a tenth of its lifetime (at most maxTokenMargin) early.
const (
	defaultTokenLife = 5 * time.Minute
	maxTokenMargin   = time.Minute
	maxTokenLife     = 24 * time.Hour
)

func newTokenCache(now func() time.Time) *tokenCache {
	return &tokenCache{now: now, entries: map[string]*tokenEntry{}}
}

// get returns a valid access token for c, fetching one when none is cached.
func (tc *tokenCache) get(ctx context.Context, client *http.Client, c *oauthClient, max int64) (string, *tokenError) {
	key := c.cacheKey()
	tc.mu.Lock()
	e := tc.entries[key]
	if e == nil {
		e = &tokenEntry{}
		tc.entries[key] = e
	}
	tc.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token != "" && tc.now().Before(e.expires) {
		return e.token, nil
	}
	tok, life, err := fetchToken(ctx, client, c, max)
	if err != nil {
		return "", err
	}
	margin := min(life/10, maxTokenMargin)
	e.token, e.expires = tok, tc.now().Add(life-margin)
	return tok, nil
}

// drop forgets the token for key (the upstream refused it).
func (tc *tokenCache) drop(key string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	delete(tc.entries, key)
}

// maxErrorBody is how much of a token endpoint's failed answer is shown.
const maxErrorBody = 512

// fetchToken makes one client-credentials request (RFC 6749 §4.4) with
// golang.org/x/oauth2/clientcredentials, over client (the outbound policy
// applies), reading at most max bytes of the answer. A client with a private
// key authenticates with a client assertion signed for this request (RFC
// 7523 §2.2, assertion) in the form, and no secret; the assertion is
// redacted from the answer like the column's values.
func fetchToken(ctx context.Context, client *http.Client, c *oauthClient, max int64) (string, time.Duration, *tokenError) {
	cfg := clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.TokenURL,
		AuthStyle: oauth2.AuthStyleInHeader, EndpointParams: url.Values{}}
	if c.AuthStyle == "body" {
		cfg.AuthStyle = oauth2.AuthStyleInParams
	}
	if c.Scope != "" {
		cfg.Scopes = []string{c.Scope}
	}
	if c.Audience != "" {
		cfg.EndpointParams.Set("audience", c.Audience)
	}
	secrets := c.secrets
	if c.PrivateKey != "" {
		signed, err := assertion(c, c.keyVar, time.Now())
		if err != nil {
			return "", 0, &tokenError{code: "private_key", msg: err.Error()}
		}
		cfg.AuthStyle = oauth2.AuthStyleInParams
		cfg.EndpointParams.Set("client_assertion_type", ClientAssertionType)
		cfg.EndpointParams.Set("client_assertion", signed)
		secrets = append(slices.Clip(secrets), signed)
	}
	seen := &answerSeen{next: cmp.Or[http.RoundTripper](client.Transport, http.DefaultTransport), max: max}
	hc := *client
	hc.Transport = seen
	tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, &hc))
	if err == nil {
		var life time.Duration // oauth2 turns expires_in (a number or a numeric string) into Expiry
		if !tok.Expiry.IsZero() {
			life = time.Until(tok.Expiry).Round(time.Second)
		}
		return tok.AccessToken, lifetime(life), nil
	}
	if seen.status == 0 {
		return "", 0, &tokenError{cause: err}
	}
	fail := func(msg string) (string, time.Duration, *tokenError) {
		return "", 0, &tokenError{status: seen.status, msg: msg}
	}
	var re *oauth2.RetrieveError
	switch {
	case seen.tooLarge:
		return fail("token endpoint answered " + strconv.Itoa(seen.status) + " with more than " + strconv.FormatInt(max, 10) + " bytes")
	case errors.As(err, &re):
		return fail("token endpoint answered " + strconv.Itoa(seen.status) + ": " + redact.Clip(string(re.Body), maxErrorBody, secrets))
	}
	return fail("token endpoint answered " + strconv.Itoa(seen.status) + " without an access_token")
}

// answerSeen is the token request's transport: it keeps the answer's status
// and cuts its body off past max bytes (tooLarge then).
type answerSeen struct {
	next     http.RoundTripper
	max      int64
	status   int
	tooLarge bool
}

func (a *answerSeen) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper leaves its request as it is
	req.Header.Set("Accept", "application/json")
	res, err := a.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	a.status = res.StatusCode
	res.Body = &capped{ReadCloser: res.Body, left: a.max, over: &a.tooLarge}
	return res, nil
}

// capped fails a read past left bytes.
type capped struct {
	io.ReadCloser
	left int64
	over *bool
}

func (c *capped) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if c.left -= int64(n); c.left < 0 {
		*c.over = true
		return 0, errors.New("token answer too large")
	}
	return n, err
}

// lifetime is a token's lifetime as its answer gave it (0: none),
// defaultTokenLife when absent or unusable, at most maxTokenLife.
func lifetime(d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return defaultTokenLife
	case d > maxTokenLife:
		return maxTokenLife
	}
	return d
}
