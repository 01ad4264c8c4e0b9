package httpcall

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
	"github.com/rowcall/rowcall/internal/redact"
)

// call is one request, built and not yet sent.
type call struct {
	method      string
	url         *url.URL        // what is sent, query credential included
	planURL     string          // what a plan shows: the query credential as [REDACTED]
	headers     http.Header     // every header the runner sets
	credHeaders map[string]bool // canonical names of the headers auth set
	body        string
	secrets     []string     // every credential value read or obtained
	oauth       *oauthClient // a client-credentials grant to run before sending
	connection  string       // bearer:connection:NAME: the caller's access token ("" in shape mode)
	provider    string       // bearer:connection:NAME: NAME, which a plan shows
}

// ParseTarget splits an http row's target "METHOD url" into an upper-cased
// method and the URL template.
func ParseTarget(target string) (method, rawURL string, err error) {
	f := strings.Fields(target)
	switch {
	case len(f) == 0:
		return "", "", errors.New(`empty target; an http row's target is "METHOD url"`)
	case len(f) == 1:
		return "", "", errors.New("target " + quote(target) + ` has no url; an http row's target is "METHOD url"`)
	case len(f) > 2:
		return "", "", errors.New("target " + quote(target) + ` has more than a method and a url; write spaces in the url as %20`)
	case !isToken(f[0]):
		return "", "", errors.New("method " + quote(f[0]) + " is not an HTTP method")
	}
	return strings.ToUpper(f[0]), f[1], nil
}

// build renders the row into a call, or returns the failure that stops it.
func (r *Runner) build(ctx context.Context, inv *rowcall.Invocation) (*call, *rowcall.Failure) {
	row := inv.Row
	method, tmpl, err := ParseTarget(row.Target)
	if err != nil {
		return nil, rowcall.Fail("http", "bad_target", err.Error())
	}
	v := args.Values{Args: inv.Args, Vars: inv.Vars}
	if v.Args == nil && inv.Body != "" {
		v.Args = args.Split(inv.Body)
	}
	p := row.Payload()
	for _, t := range []string{tmpl, p} {
		if err := args.Check(t, v); err != nil {
			return nil, rowcall.Fail("http", "bad_args", err.Error())
		}
	}
	u, err := url.Parse(args.Render(tmpl, args.URL, v))
	if err != nil {
		return nil, rowcall.Fail("http", "bad_target", errorsUnwrapURL(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, rowcall.Fail("http", "bad_target", "url "+quote(tmpl)+" is not an absolute http or https URL")
	}
	c := &call{method: method, url: u, headers: http.Header{}, credHeaders: map[string]bool{}}
	if p != "" {
		c.body = args.Render(p, args.Body, v)
	}
	if r.agent != "" {
		c.headers.Set("User-Agent", r.agent)
	}
	if c.body != "" {
		c.headers.Set("Content-Type", contentType(c.body))
	}
	spec, fail := parseAuth(row.Auth)
	if fail == nil && spec.OAuth != nil && spec.OAuth.TokenURL == "" {
		fail = rowcall.Fail("auth", "bad_spec", "oauth: token_url is required").
			Because("only an MCP row discovers its token endpoint from the server; write the authorization server's token endpoint as token_url")
	}
	if fail != nil {
		return nil, rowcall.Fail("http", row.Key).Wrapping(fail)
	}
	env := inv.Env
	if env == nil {
		env = rowcall.EnvFunc(func(string) (string, bool) { return "", false })
	}
	c.provider = spec.Connection
	if !inv.Shape { // a plan says which connection is used, and never reads it
		if fail := spec.connect(ctx, c, "http", row.Key); fail != nil {
			return nil, fail
		}
	}
	spec.apply(c, env)
	if c.planURL == "" {
		c.planURL = c.url.String()
	}
	return c, nil
}

// request makes the http.Request for c.
func (c *call) request(ctx context.Context) (*http.Request, error) {
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url.String(), body)
	if err != nil {
		return nil, errors.New(errorsUnwrapURL(err))
	}
	req.Header = c.headers.Clone()
	return req, nil
}

// shape is the shape-mode output: the request as it would go out, without
// its credentials, and nothing sent.
func (c *call) shape() rowcall.Output {
	plan := map[string]any{
		"method":  c.method,
		"url":     c.planURL,
		"headers": headerMap(c.headers, c.credHeaders),
		"body":    c.body,
	}
	if c.provider != "" {
		plan["connection"] = c.provider // the caller's own credential at this provider, never its value
	}
	red := redact.Redact(plan, c.secrets).(map[string]any)
	return rowcall.Output{
		Result:  "SHAPE:http:" + c.method + " " + red["url"].(string),
		Plan:    red,
		Secrets: c.secrets,
	}
}

// contentType names the rendered body's media type.
func contentType(body string) string {
	t := strings.TrimSpace(body)
	if t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
		return "application/json"
	}
	if isForm(t) {
		return "application/x-www-form-urlencoded"
	}
	return "text/plain; charset=utf-8"
}

// isForm reports whether t looks like a form body: no blanks, and a field
// name followed by '=' at the start (the same rule args.Body uses).
func isForm(t string) bool {
	if t == "" || strings.ContainsAny(t, " \t\r\n") {
		return false
	}
	i := 0
	for i < len(t) && (isNameByte(t[i]) || strings.IndexByte(".~%[]-", t[i]) >= 0) {
		i++
	}
	return i > 0 && i < len(t) && t[i] == '='
}

func isNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isToken reports whether s is an RFC 9110 token (a method or header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isNameByte(c) && strings.IndexByte("!#$%&'*+-.^`|~", c) < 0 {
			return false
		}
	}
	return true
}

func quote(s string) string { return `"` + s + `"` }
