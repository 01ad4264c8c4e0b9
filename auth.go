package rowcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Auth is a parsed auth column: how a row's credential is injected and which
// environment variables it reads. ParseAuth is the only parser of the column,
// and everything that depends on it decides from its value, never from the raw
// text: the owner gate (Row.OwnerOnly), the write check (CheckAuth), the
// runners that inject the credential, and the contract document. JSON escapes
// in headers: and oauth: specs ("$ROWCALL_OWNER_KE\u0059") are decoded before
// any name is read, so a name means the same to the gate as to the injector.
type Auth struct {
	Kind string // "", "bearer", "basic", "headers", "query", "oauth"
	Env  string // bearer, basic, query: the variable's name
	// Connection is, for bearer:connection:NAME, the operator's provider
	// whose access token the caller connected (connection.go): the
	// credential is the caller's own, never a variable's.
	Connection string
	Param      string            // query: the parameter's name
	Headers    map[string]string // headers: header name → value template ($NAME read at call time)
	OAuth      *OAuth            // oauth: the client-credentials request; each field a template
	Vars       []string          // every variable the column reads, sorted, each once
}

// OAuth is the oauth:{…} object of an auth column. Every field but Alg and
// AuthStyle may name variables as $NAME. TokenURL may be empty on an MCP row:
// its runner then discovers the token endpoint from the server
// (runners/mcpcall). The client authenticates with ClientSecret or, instead,
// with a JWT it signs with PrivateKey (private_key_jwt, RFC 7523 §2.2):
// PrivateKey is always one variable ("$NAME") holding the PEM key, never the
// key itself, so a row's text never carries it.
type OAuth struct {
	TokenURL     string `json:"token_url"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Scope        string `json:"scope"`
	Audience     string `json:"audience"`
	AuthStyle    string `json:"auth_style"`  // "basic" (default) or "body"; with ClientSecret only
	PrivateKey   string `json:"private_key"` // "$NAME": the variable holding a PEM private key (PKCS#8, SEC 1 or PKCS#1)
	KeyID        string `json:"kid"`         // the assertion's kid header, when the server needs it
	Alg          string `json:"alg"`         // the assertion's algorithm (AssertionAlgs); "" follows the key
	// AssertionAudience is the assertion's aud; "" is the authorization
	// server's issuer when discovered, else the token endpoint.
	AssertionAudience string `json:"assertion_audience"`
}

// AssertionAlgs are the algorithms an oauth: column's alg may name.
var AssertionAlgs = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// AuthKeyInRow is the code of an oauth: column whose private_key is not one
// variable's name: the key itself would be stored in the row (CheckAuth
// refuses it).
const AuthKeyInRow = "auth_private_key_in_row"

// AuthError is why an auth column cannot be used. Its Failure is what runners
// report (ERR:auth:Code:Detail).
type AuthError struct {
	Code   string // unknown_prefix, bad_spec or auth_reserved_variable
	Detail string
}

func (e *AuthError) Error() string { return e.Code + ":" + e.Detail }

// Failure is e as a runner reports it: ERR:auth:<code>:<detail>.
func (e *AuthError) Failure() *Failure { return Fail("auth", e.Code, e.Detail) }

// AuthReservedVariable is the code of an auth column naming one of rowcall's
// own variables (ReservedVar).
const AuthReservedVariable = "auth_reserved_variable"

// EAuthOutsidePrefix is the code of an auth column naming a variable outside
// the host's secrets prefix (CheckAuth).
const EAuthOutsidePrefix Code = "auth_outside_secrets_prefix"

// ReservedVar reports whether name is one of rowcall's own variables
// (ROWCALL_*: the database token, the receipt signing key, settings), which
// no row may read. The owner key (OwnerEnv) is the one exception: a row may
// name it, and the owner gate then lets only the owner call that row.
func ReservedVar(name string) bool {
	return strings.HasPrefix(strings.ToUpper(name), "ROWCALL_") && name != OwnerEnv
}

// ParseAuth reads an auth column ("" is no credential). It fails with an
// *AuthError for an unknown prefix, a malformed spec, or a spec that names a
// reserved variable.
func ParseAuth(auth string) (Auth, error) {
	auth = strings.TrimSpace(auth)
	if auth == "" {
		return Auth{}, nil
	}
	prefix, rest, _ := strings.Cut(auth, ":")
	rest = strings.TrimSpace(rest)
	a := Auth{Kind: strings.ToLower(strings.TrimSpace(prefix))}
	bad := func(format string, v ...any) (Auth, error) {
		return a, &AuthError{Code: "bad_spec", Detail: a.Kind + ": " + fmt.Sprintf(format, v...)}
	}
	switch a.Kind {
	case "bearer", "basic":
		if name, ok := strings.CutPrefix(rest, "connection:"); ok && a.Kind == "bearer" {
			if !IsProviderName(name) {
				return bad("connection %q is not a provider name ([a-z0-9_-], 1 to 64 characters)", name)
			}
			a.Connection = name
			break
		}
		if !isVarName(rest) {
			return bad("%q is not an environment variable name", rest)
		}
		a.Env, a.Vars = rest, []string{rest}
	case "query":
		param, env, ok := strings.Cut(rest, "=")
		param, env = strings.TrimSpace(param), strings.TrimSpace(env)
		if !ok || param == "" || !isVarName(env) {
			return bad("want query:param=ENV_NAME, got %q", rest)
		}
		a.Param, a.Env, a.Vars = param, env, []string{env}
	case "headers":
		h, err := parseHeaders(rest)
		if err != nil {
			return bad("%v", err)
		}
		a.Headers = h
		for _, v := range h {
			a.Vars = append(a.Vars, TemplateVars(v)...)
		}
	case "oauth":
		o, err := parseOAuth(rest)
		if errors.Is(err, errKeyInRow) {
			return a, &AuthError{Code: AuthKeyInRow, Detail: err.Error()}
		}
		if err != nil {
			return bad("%v", err)
		}
		a.OAuth = o
		for _, f := range []string{o.TokenURL, o.ClientID, o.ClientSecret, o.Scope, o.Audience, o.PrivateKey, o.KeyID, o.AssertionAudience} {
			a.Vars = append(a.Vars, TemplateVars(f)...)
		}
	default:
		return a, &AuthError{Code: "unknown_prefix", Detail: strings.TrimSpace(prefix)}
	}
	slices.Sort(a.Vars)
	a.Vars = slices.Compact(a.Vars)
	for _, name := range a.Vars {
		if ReservedVar(name) {
			return a, &AuthError{Code: AuthReservedVariable, Detail: name}
		}
	}
	return a, nil
}

// Reads reports whether the column reads the variable name.
func (a Auth) Reads(name string) bool { return slices.Contains(a.Vars, name) }

// OwnerOnly reports whether the row wields the owner's credential: its auth
// column reads OwnerEnv. A column that does not parse injects nothing, but is
// treated as owner-only when its text names the owner key anyway, so a
// malformed spec never widens who may call a row.
func (r *Row) OwnerOnly() bool {
	a, err := ParseAuth(r.Auth)
	if err != nil {
		return strings.Contains(r.Auth, OwnerEnv)
	}
	return a.Reads(OwnerEnv)
}

// CheckAuth is the write path's check of an auth column: it refuses (422,
// auth_reserved_variable) a column naming a reserved variable, and, when the
// operator restricts rows to a namespace of secrets (prefix, e.g. "ROWS_"), a
// column naming a variable outside it (auth_outside_secrets_prefix). The owner
// key is always allowed; the owner gate guards it. A column that does not
// parse for other reasons is stored, and fails with its reason when called.
func CheckAuth(auth, prefix string) *Error {
	a, err := ParseAuth(auth)
	var ae *AuthError
	if errors.As(err, &ae) && ae.Code == AuthReservedVariable {
		return &Error{Code: AuthReservedVariable,
			Message:  "auth names " + ae.Detail + ", one of rowcall's own variables (ROWCALL_*), which no row may read",
			HowToFix: "name a variable of your own that holds the upstream's credential (for example bearer:MY_API_KEY); only ROWCALL_OWNER_KEY may be named, and only the owner may then call the row",
			Extra:    map[string]any{"field": "auth", "variable": ae.Detail}}
	}
	if errors.As(err, &ae) && ae.Code == AuthKeyInRow {
		return &Error{Code: AuthKeyInRow,
			Message:  "auth's private_key is not the name of an environment variable: the key itself would be stored in the row, and shown to everyone who may read it",
			HowToFix: `put the PEM private key in an environment variable of the host and name it: "private_key":"$MY_CLIENT_KEY"`,
			Extra:    map[string]any{"field": "auth"}}
	}
	if err != nil || prefix == "" {
		return nil
	}
	for _, name := range a.Vars {
		if !inNamespace(name, prefix) {
			return &Error{Code: EAuthOutsidePrefix,
				Message:  "auth names " + name + ", outside this host's namespace of secrets (" + prefix + "*)",
				HowToFix: "rename the variable to start with " + prefix + " (the operator set ROWCALL_SECRETS_PREFIX / --secrets-prefix)",
				Extra:    map[string]any{"field": "auth", "variable": name, "secrets_prefix": prefix}}
		}
	}
	return nil
}

// SecretsEnv is env as rows see it: reserved variables (ReservedVar) are never
// returned, and with a prefix only names starting with it are (the owner key
// is always, for the owner gate's rows). Hosts wrap their environment in it,
// so a row stored before a rule tightened still reads nothing it may not.
func SecretsEnv(env Env, prefix string) Env {
	return EnvFunc(func(name string) (string, bool) {
		if env == nil || ReservedVar(name) || !inNamespace(name, prefix) {
			return "", false
		}
		return env.Lookup(name)
	})
}

// inNamespace reports whether a row may name the variable under the
// operator's secrets prefix ("" allows every name): the owner key always.
func inNamespace(name, prefix string) bool {
	return prefix == "" || name == OwnerEnv || strings.HasPrefix(name, prefix)
}

// TemplateVars lists the variables a template names, in order: every $NAME,
// NAME being [A-Za-z_][A-Za-z0-9_]*.
func TemplateVars(s string) []string {
	var names []string
	ExpandVars(s, func(name string) (string, bool) {
		names = append(names, name)
		return "", true
	})
	return names
}

// ExpandVars replaces every $NAME in s with lookup(NAME). ok is false when a
// named variable is missing or empty (out is then ""); used lists the values
// read, in order.
func ExpandVars(s string, lookup func(string) (string, bool)) (out string, used []string, ok bool) {
	if !strings.Contains(s, "$") {
		return s, nil, true
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 == len(s) || !isVarStart(s[i+1]) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i + 2
		for j < len(s) && isVarByte(s[j]) {
			j++
		}
		v, found := lookup(s[i+1 : j])
		if !found {
			return "", nil, false
		}
		used = append(used, v)
		b.WriteString(v)
		i = j
	}
	return b.String(), used, true
}

// parseHeaders reads headers:{"Name":"value with $ENV", …}.
func parseHeaders(s string) (map[string]string, error) {
	var raw map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("want a JSON object of header names to strings: %v", err)
	}
	if dec.More() {
		return nil, errors.New("text after the JSON object")
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("header %q: value must be a string", k)
		}
		if !httpToken(k) {
			return nil, fmt.Errorf("%q is not a header name", k)
		}
		out[k] = str
	}
	return out, nil
}

// errKeyInRow is an oauth: spec whose private_key is not "$NAME".
var errKeyInRow = errors.New(`private_key must be one environment variable's name, "$NAME", never the key`)

// parseOAuth reads oauth:{"token_url":…,"client_id":…,"client_secret":…}, or
// the same with "private_key":"$NAME" (and optional kid, alg,
// assertion_audience) in place of client_secret.
func parseOAuth(s string) (*OAuth, error) {
	var o OAuth
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf(`want {"token_url":…,"client_id":…,"client_secret":…} with optional scope, audience, auth_style, or "private_key":"$NAME" with optional kid, alg, assertion_audience in place of client_secret: %v`, err)
	}
	if dec.More() {
		return nil, errors.New("text after the JSON object")
	}
	key := o.PrivateKey != ""
	switch {
	case key && (len(o.PrivateKey) < 2 || o.PrivateKey[0] != '$' || !isVarName(o.PrivateKey[1:])):
		return nil, errKeyInRow
	case o.ClientID == "" || o.ClientSecret == "" && !key:
		return nil, errors.New("client_id and client_secret (or private_key) are required")
	case o.ClientSecret != "" && key:
		return nil, errors.New("client_secret and private_key: name one way for the client to authenticate")
	case !key && (o.KeyID != "" || o.Alg != "" || o.AssertionAudience != ""):
		return nil, errors.New("kid, alg and assertion_audience go with private_key")
	case key && o.AuthStyle != "":
		return nil, errors.New("auth_style goes with client_secret; a private_key client sends a signed assertion in the form")
	case o.Alg != "" && !slices.Contains(AssertionAlgs, o.Alg):
		return nil, fmt.Errorf("alg %q: want one of %s", o.Alg, strings.Join(AssertionAlgs, ", "))
	case o.AuthStyle != "" && o.AuthStyle != "basic" && o.AuthStyle != "body":
		return nil, fmt.Errorf(`auth_style %q: want "basic" or "body"`, o.AuthStyle)
	case o.TokenURL != "" && !strings.HasPrefix(o.TokenURL, "$"):
		if u, err := url.Parse(o.TokenURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("token_url %q is not an absolute http or https URL", o.TokenURL)
		}
	}
	return &o, nil
}

func isVarStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isVarByte(c byte) bool  { return isVarStart(c) || '0' <= c && c <= '9' }

// isVarName reports whether s is a variable name: [A-Za-z_][A-Za-z0-9_]*.
func isVarName(s string) bool {
	return s != "" && isVarStart(s[0]) && strings.IndexFunc(s, func(r rune) bool { return r > 127 || !isVarByte(byte(r)) }) < 0
}

// httpToken reports whether s is an RFC 9110 token (a header name).
func httpToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return r > 127 || !isVarByte(byte(r)) && !strings.ContainsRune("!#$%&'*+-.^`|~", r)
	}) < 0
}
