package httpcall

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/rowcall/rowcall"
)

// authSpec is a parsed auth column (rowcall.ParseAuth, the only parser).
type authSpec struct{ rowcall.Auth }

// parseAuth reads an auth column. fail is ERR:auth:unknown_prefix:<prefix>,
// bad_spec:<message> or auth_reserved_variable:<NAME> when the column cannot
// be used.
func parseAuth(auth string) (spec authSpec, fail *rowcall.Failure) {
	a, err := rowcall.ParseAuth(auth)
	if err != nil {
		var ae *rowcall.AuthError
		if !errors.As(err, &ae) {
			ae = &rowcall.AuthError{Code: "bad_spec", Detail: err.Error()}
		}
		return spec, ae.Failure()
	}
	return authSpec{a}, nil
}

// apply reads the credential from env and puts it on c. A missing variable
// applies nothing.
func (s authSpec) apply(c *call, env rowcall.Env) {
	setHeader := func(name, value string) {
		c.headers.Set(name, value)
		c.credHeaders[http.CanonicalHeaderKey(name)] = true
	}
	switch s.Kind {
	case "bearer", "basic":
		v, ok := env.Lookup(s.Env)
		if s.Connection != "" {
			v, ok = c.connection, true
		}
		if !ok || v == "" {
			return
		}
		c.secrets = append(c.secrets, v)
		if s.Kind == "bearer" {
			setHeader("Authorization", "Bearer "+v)
			return
		}
		if !strings.Contains(v, ":") {
			v += ":"
		}
		setHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(v)))
	case "query":
		v, ok := env.Lookup(s.Env)
		if !ok || v == "" {
			return
		}
		c.secrets = append(c.secrets, v)
		plan := *c.url
		plan.RawQuery = addQuery(c.url.RawQuery, url.QueryEscape(s.Param)+"=[REDACTED]")
		c.planURL = plan.String()
		c.url.RawQuery = addQuery(c.url.RawQuery, url.QueryEscape(s.Param)+"="+url.QueryEscape(v))
	case "headers":
		for name, tmpl := range s.Headers {
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
		if o, used, ok := resolveOAuth(s.OAuth, env); ok {
			c.secrets = append(c.secrets, used...)
			c.oauth = o
			c.credHeaders["Authorization"] = true
		}
	}
}

// connect reads the caller's access token for a bearer:connection:NAME
// column into c (rowcall.ConnectorOf: the calling credential's connection,
// refreshed when it expired); fail is the kind:key failure wrapping
// ERR:auth:connection_required:NAME (and where to connect) when there is none.
func (s authSpec) connect(ctx context.Context, c *call, kind, key string) *rowcall.Failure {
	if s.Connection == "" {
		return nil
	}
	tok, fail := rowcall.ConnectorOf(ctx)(ctx, s.Connection)
	if fail != nil {
		return rowcall.Fail(kind, key).Wrapping(fail)
	}
	c.connection = tok
	return nil
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
	return rowcall.ExpandVars(s, func(name string) (string, bool) {
		v, found := env.Lookup(name)
		return v, found && v != ""
	})
}
