package httpcall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
)

// oauthClient is an oauth: spec with its variables read.
type oauthClient struct {
	rowcall.OAuth
	secrets []string // the variables' values, redacted from the token endpoint's answers
}

// resolveOAuth reads the spec's variables. ok is false when any is missing.
func resolveOAuth(o *rowcall.OAuth, env rowcall.Env) (c *oauthClient, used []string, ok bool) {
	out := oauthClient{OAuth: rowcall.OAuth{AuthStyle: o.AuthStyle}}
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&out.TokenURL, o.TokenURL}, {&out.ClientID, o.ClientID}, {&out.ClientSecret, o.ClientSecret},
		{&out.Scope, o.Scope}, {&out.Audience, o.Audience},
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
// of the secret (never the secret itself).
func (c *oauthClient) cacheKey() string {
	sum := sha256.Sum256([]byte(c.ClientSecret))
	return strings.Join([]string{c.TokenURL, c.ClientID, c.Scope, c.Audience, hex.EncodeToString(sum[:])}, "\x00")
}

// tokenError is a failed token request. status is the token endpoint's
// status when it answered, 0 when it did not (cause then holds why).
type tokenError struct {
	status int
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

// tokenAnswer is the fields of an RFC 6749 §5.1 answer the runner reads.
type tokenAnswer struct {
	AccessToken string          `json:"access_token"`
	ExpiresIn   json.RawMessage `json:"expires_in"`
}

// maxErrorBody is how much of a token endpoint's failed answer is shown.
const maxErrorBody = 512

// fetchToken makes one client-credentials request.
func fetchToken(ctx context.Context, client *http.Client, c *oauthClient, max int64) (string, time.Duration, *tokenError) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if c.Scope != "" {
		form.Set("scope", c.Scope)
	}
	if c.Audience != "" {
		form.Set("audience", c.Audience)
	}
	if c.AuthStyle == "body" {
		form.Set("client_id", c.ClientID)
		form.Set("client_secret", c.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &tokenError{cause: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.AuthStyle != "body" {
		req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, &tokenError{cause: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return "", 0, &tokenError{cause: err}
	}
	fail := func(msg string) (string, time.Duration, *tokenError) {
		return "", 0, &tokenError{status: resp.StatusCode, msg: msg}
	}
	if int64(len(body)) > max {
		return fail("token endpoint answered " + strconv.Itoa(resp.StatusCode) + " with more than " + strconv.FormatInt(max, 10) + " bytes")
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fail("token endpoint answered " + strconv.Itoa(resp.StatusCode) + ": " + redact.Clip(string(body), maxErrorBody, c.secrets))
	}
	var a tokenAnswer
	if err := json.Unmarshal(body, &a); err != nil || a.AccessToken == "" {
		return fail("token endpoint answered " + strconv.Itoa(resp.StatusCode) + " without an access_token")
	}
	return a.AccessToken, lifetime(a.ExpiresIn), nil
}

// lifetime reads expires_in, a number of seconds (some servers send it as a
// string); defaultTokenLife when absent or unusable.
func lifetime(raw json.RawMessage) time.Duration {
	s := strings.Trim(string(raw), `"`)
	n, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || n <= 0:
		return defaultTokenLife
	case n > maxTokenLife.Seconds():
		return maxTokenLife
	}
	return time.Duration(n * float64(time.Second))
}
