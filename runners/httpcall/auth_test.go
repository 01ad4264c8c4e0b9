package httpcall

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

func TestAuthReachesUpstream(t *testing.T) {
	up := newUpstream(t, nil)
	r := New(Config{})
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name        string
		auth        string
		env         env
		wantHeaders map[string]string // "" means the header must be absent
		wantQuery   string
		wantSecrets []string
	}{
		{"none", "", env{"GROK_API_KEY": "xai-1234"},
			map[string]string{"Authorization": ""}, "", nil},
		{"bearer", "bearer:GROK_API_KEY", env{"GROK_API_KEY": "xai-1234"},
			map[string]string{"Authorization": "Bearer xai-1234"}, "", []string{"xai-1234"}},
		{"bearer missing env", "bearer:GROK_API_KEY", env{},
			map[string]string{"Authorization": ""}, "", nil},
		{"bearer empty env", "bearer:GROK_API_KEY", env{"GROK_API_KEY": ""},
			map[string]string{"Authorization": ""}, "", nil},
		{"basic", "basic:STRIPE_KEY", env{"STRIPE_KEY": "sk_test_9"},
			map[string]string{"Authorization": "Basic " + b64("sk_test_9:")}, "", []string{"sk_test_9"}},
		{"basic user:pass", "basic:SVC_LOGIN", env{"SVC_LOGIN": "alice:pw:x"},
			map[string]string{"Authorization": "Basic " + b64("alice:pw:x")}, "", []string{"alice:pw:x"}},
		{"basic missing env", "basic:STRIPE_KEY", nil,
			map[string]string{"Authorization": ""}, "", nil},
		{"headers", `headers:{"X-Api-Key":"$K1","X-Pair":"$ID:$K2","Accept":"application/json"}`,
			env{"K1": "key-one", "ID": "acct", "K2": "key-two"},
			map[string]string{"X-Api-Key": "key-one", "X-Pair": "acct:key-two", "Accept": "application/json"},
			"", []string{"acct", "key-one", "key-two"}},
		{"headers missing env", `headers:{"X-Api-Key":"$K1","X-Pair":"$ID:$K2","Accept":"application/json"}`,
			env{"ID": "acct"},
			map[string]string{"X-Api-Key": "", "X-Pair": "", "Accept": "application/json"}, "", nil},
		{"query", "query:api_key=WEATHER_KEY", env{"WEATHER_KEY": "w k&y=1"},
			map[string]string{"Authorization": ""}, "a=1&api_key=w+k%26y%3D1", []string{"w k&y=1"}},
		{"query missing env", "query:api_key=WEATHER_KEY", env{},
			nil, "a=1", nil},
		{"prefix case-insensitive", "Bearer:GROK_API_KEY", env{"GROK_API_KEY": "xai-1234"},
			map[string]string{"Authorization": "Bearer xai-1234"}, "", []string{"xai-1234"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := "GET " + up.URL + "/v1/models"
			wantQuery := tt.wantQuery
			if strings.HasPrefix(tt.auth, "query") {
				target += "?a=1"
			}
			out := invoke(r, httpRow("ROW", target, tt.auth, ""), "", tt.env, false)
			if out.Result != "HTTP 200:ok" || out.Status != 200 || !out.Material {
				t.Fatalf("out = %+v", out)
			}
			got := up.seen()
			for k, want := range tt.wantHeaders {
				if v := got.Header.Get(k); v != want {
					t.Errorf("header %s = %q, want %q", k, v, want)
				}
			}
			if got.RawQuery != wantQuery {
				t.Errorf("query = %q, want %q", got.RawQuery, wantQuery)
			}
			secrets := slices.Sorted(slices.Values(out.Secrets))
			if !slices.Equal(secrets, tt.wantSecrets) {
				t.Errorf("Secrets = %q, want %q", secrets, tt.wantSecrets)
			}
		})
	}
}

func TestAuthRefused(t *testing.T) {
	up := newUpstream(t, nil)
	r := New(Config{})
	tests := []struct{ auth, want string }{
		{"apikey:X", "ERR:http:ROW:ERR:auth:unknown_prefix:apikey"},
		{"GROK_API_KEY", "ERR:http:ROW:ERR:auth:unknown_prefix:GROK_API_KEY"},
		{"token: X", "ERR:http:ROW:ERR:auth:unknown_prefix:token"},
		{"bearer:", `ERR:http:ROW:ERR:auth:bad_spec:bearer: "" is not an environment variable name`},
		{"basic:MY KEY", `ERR:http:ROW:ERR:auth:bad_spec:basic: "MY KEY" is not an environment variable name`},
		{"query:KEY", `ERR:http:ROW:ERR:auth:bad_spec:query: want query:param=ENV_NAME, got "KEY"`},
		{`headers:{"X-Key":"$K"`, "ERR:http:ROW:ERR:auth:bad_spec:headers: want a JSON object of header names to strings: unexpected EOF"},
		{`headers:{"X-Key":5}`, `ERR:http:ROW:ERR:auth:bad_spec:headers: header "X-Key": value must be a string`},
		{`headers:{"Bad Name":"$K"}`, `ERR:http:ROW:ERR:auth:bad_spec:headers: "Bad Name" is not a header name`},
		{`oauth:{"token_url":"https://a.test/t"}`, "ERR:http:ROW:ERR:auth:bad_spec:oauth: client_id and client_secret (or private_key) are required"},
		{`oauth:{"client_id":"$ID","client_secret":"$SECRET"}`, "ERR:http:ROW:ERR:auth:bad_spec:oauth: token_url is required — only an MCP row discovers its token endpoint from the server; write the authorization server's token endpoint as token_url"},
		{`oauth:{"token_url":"https://a.test/t","client_id":"a","client_secret":"$S","grant":"x"}`,
			`ERR:http:ROW:ERR:auth:bad_spec:oauth: want {"token_url":…,"client_id":…,"client_secret":…} with optional scope, audience, auth_style, or "private_key":"$NAME" with optional kid, alg, assertion_audience in place of client_secret: json: unknown field "grant"`},
		{`oauth:{"token_url":"ftp://a.test/t","client_id":"a","client_secret":"$S"}`,
			`ERR:http:ROW:ERR:auth:bad_spec:oauth: token_url "ftp://a.test/t" is not an absolute http or https URL`},
	}
	for _, tt := range tests {
		t.Run(tt.auth, func(t *testing.T) {
			for _, shape := range []bool{false, true} {
				out := invoke(r, httpRow("ROW", "GET "+up.URL, tt.auth, ""), "", env{"X": "v", "K": "v"}, shape)
				if out.Result != tt.want {
					t.Errorf("shape=%v: Result = %q\nwant %q", shape, out.Result, tt.want)
				}
				if out.Material || out.Status != 0 {
					t.Errorf("out = %+v", out)
				}
			}
		})
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("upstream hit %d times", n)
	}
}

func TestExpandEnv(t *testing.T) {
	e := env{"A": "1", "B_2": "two", "E": ""}
	tests := []struct {
		in, out string
		ok      bool
	}{
		{"plain", "plain", true},
		{"$A", "1", true},
		{"x$A-$B_2.", "x1-two.", true},
		{"$ 5 $1 $", "$ 5 $1 $", true},
		{"$MISSING", "", false},
		{"$E", "", false},
	}
	for _, tt := range tests {
		out, _, ok := expandEnv(tt.in, e)
		if out != tt.out || ok != tt.ok {
			t.Errorf("expandEnv(%q) = %q, %v; want %q, %v", tt.in, out, ok, tt.out, tt.ok)
		}
	}
}
