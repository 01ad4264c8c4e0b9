package httpcall

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rowcall/rowcall"
)

// authSpec is a parsed auth column.
type authSpec struct {
	kind    string            // "", "bearer", "basic", "headers", "query", "oauth"
	env     string            // bearer, basic, query: the variable's name
	param   string            // query: the parameter's name
	headers map[string]string // headers: name → value template
	oauth   *oauthSpec
}

// parseAuth reads an auth column. fail is "unknown_prefix:<prefix>" or
// "bad_spec:<message>" when the column cannot be used.
func parseAuth(auth string) (spec authSpec, fail string) {
	auth = strings.TrimSpace(auth)
	if auth == "" {
		return authSpec{}, ""
	}
	prefix, rest, _ := strings.Cut(auth, ":")
	rest = strings.TrimSpace(rest)
	spec.kind = strings.ToLower(strings.TrimSpace(prefix))
	switch spec.kind {
	case "bearer", "basic":
		if !isEnvName(rest) {
			return spec, "bad_spec:" + spec.kind + ": " + quote(rest) + " is not an environment variable name"
		}
		spec.env = rest
	case "query":
		param, env, ok := strings.Cut(rest, "=")
		param, env = strings.TrimSpace(param), strings.TrimSpace(env)
		if !ok || param == "" || !isEnvName(env) {
			return spec, "bad_spec:query: want query:param=ENV_NAME, got " + quote(rest)
		}
		spec.param, spec.env = param, env
	case "headers":
		h, err := parseHeaders(rest)
		if err != nil {
			return spec, "bad_spec:headers: " + err.Error()
		}
		spec.headers = h
	case "oauth":
		o, err := parseOAuth(rest)
		if err != nil {
			return spec, "bad_spec:oauth: " + err.Error()
		}
		spec.oauth = o
	default:
		return spec, "unknown_prefix:" + strings.TrimSpace(prefix)
	}
	return spec, ""
}

// parseHeaders reads headers:{"Name":"value with $ENV", …}.
func parseHeaders(s string) (map[string]string, error) {
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("want a JSON object of header names to strings: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("text after the JSON object")
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("header %q: value must be a string", k)
		}
		if !isToken(k) {
			return nil, fmt.Errorf("%q is not a header name", k)
		}
		out[k] = str
	}
	return out, nil
}

// apply reads the credential from env and puts it on c. A missing variable
// applies nothing.
func (s authSpec) apply(c *call, env rowcall.Env) {
	setHeader := func(name, value string) {
		c.headers.Set(name, value)
		c.credHeaders[http.CanonicalHeaderKey(name)] = true
	}
	switch s.kind {
	case "bearer", "basic":
		v, ok := env.Lookup(s.env)
		if !ok || v == "" {
			return
		}
		c.secrets = append(c.secrets, v)
		if s.kind == "bearer" {
			setHeader("Authorization", "Bearer "+v)
			return
		}
		if !strings.Contains(v, ":") {
			v += ":"
		}
		setHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(v)))
	case "query":
		v, ok := env.Lookup(s.env)
		if !ok || v == "" {
			return
		}
		c.secrets = append(c.secrets, v)
		plan := *c.url
		plan.RawQuery = addQuery(c.url.RawQuery, url.QueryEscape(s.param)+"=[REDACTED]")
		c.planURL = plan.String()
		c.url.RawQuery = addQuery(c.url.RawQuery, url.QueryEscape(s.param)+"="+url.QueryEscape(v))
	case "headers":
		for name, tmpl := range s.headers {
			v, used, ok := expandEnv(tmpl, env)
			if !ok {
				continue
			}
			c.secrets = append(c.secrets, used...)
			if len(used) > 0 {
				setHeader(name, v)
			} else {
				c.headers.Set(name, v) // a constant header is not credential material
			}
		}
	case "oauth":
		if o, used, ok := s.oauth.resolve(env); ok {
			c.secrets = append(c.secrets, used...)
			c.oauth = o
			c.credHeaders["Authorization"] = true
		}
	}
}

func addQuery(q, pair string) string {
	if q == "" {
		return pair
	}
	return q + "&" + pair
}

// expandEnv replaces every $NAME in s with the variable's value. ok is false
// when any named variable is missing or empty; used lists the values read.
func expandEnv(s string, env rowcall.Env) (out string, used []string, ok bool) {
	if !strings.Contains(s, "$") {
		return s, nil, true
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 == len(s) || !isNameStart(s[i+1]) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i + 2
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		v, found := env.Lookup(s[i+1 : j])
		if !found || v == "" {
			return "", nil, false
		}
		used = append(used, v)
		b.WriteString(v)
		i = j
	}
	return b.String(), used, true
}

func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isEnvName reports whether s is a variable name: [A-Za-z_][A-Za-z0-9_]*.
func isEnvName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}
