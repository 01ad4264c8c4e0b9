package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	const sec = "sk-live-abc/def+ghi"
	tests := []struct {
		name, in, want string
		secrets        []string
	}{
		{"plain", "token sk-live-abc/def+ghi here", "token [REDACTED] here", []string{sec}},
		{"query escaped", "?key=sk-live-abc%2Fdef%2Bghi&x=1", "?key=[REDACTED]&x=1", []string{sec}},
		{"query escaped lower hex", "?key=sk-live-abc%2fdef%2bghi", "?key=[REDACTED]", []string{sec}},
		{"path escaped", "/v1/sk-live-abc%2Fdef+ghi/x", "/v1/[REDACTED]/x", []string{sec}},
		{"two secrets overlapping", "xxABCDEFGHyy", "xx[REDACTED]yy", []string{"ABCDEF", "DEFGH"}},
		{"adjacent occurrences merge", "abcdabcd!", "[REDACTED]!", []string{"abcd"}},
		{"short secret ignored", "abc abc", "abc abc", []string{"abc"}},
		{"empty secret ignored", "text", "text", []string{""}},
		{"no secrets", "text", "text", nil},
		{"json escaped", `{"k":"pa\"ss\\word"}`, `{"k":"[REDACTED]"}`, []string{`pa"ss\word`}},
		{"html json escaped", `{"k":"a\u003cbcd"}`, `{"k":"[REDACTED]"}`, []string{`a<bcd`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in, tt.secrets); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestStringBase64(t *testing.T) {
	const sec = "hunter2-password"
	for _, plain := range []string{sec + ":", "user:" + sec, "ab" + sec + "cd", "a" + sec} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			in := "Basic " + enc.EncodeToString([]byte(plain))
			out := String(in, []string{sec})
			if !strings.Contains(out, Marker) {
				t.Errorf("base64 of %q not redacted: %q", plain, out)
			}
			if leaks(out, sec) {
				t.Errorf("base64 of %q leaks after redaction: %q", plain, out)
			}
		}
	}
}

func TestSensitiveName(t *testing.T) {
	yes := []string{"Authorization", "proxy-authorization", "X-API-Key", "api-key", "Cookie", "Set-Cookie",
		"GROK_API_KEY", "grok_api_key", "X-Auth-Token", "access_token", "CLIENT_SECRET", "x-csrf-token"}
	no := []string{"Content-Type", "Accept", "token", "secret", "apikey_hint", "tokens", "key", "x-request-id"}
	for _, n := range yes {
		if !SensitiveName(n) {
			t.Errorf("SensitiveName(%q) = false, want true", n)
		}
	}
	for _, n := range no {
		if SensitiveName(n) {
			t.Errorf("SensitiveName(%q) = true, want false", n)
		}
	}
}

func TestRedact(t *testing.T) {
	const sec = "s3cr3t-value"
	in := map[string]any{
		"method": "GET",
		"url":    "https://api.example/v1?key=" + sec,
		"headers": map[string]string{
			"Authorization": "Bearer " + sec,
			"X-Api-Key":     "whatever",
			"Content-Type":  "application/json",
			"X-Echo":        "v=" + sec,
		},
		"env":  map[string]any{"GROK_API_KEY": "x", "nested": []any{"a " + sec, 3.5, true, nil}},
		"list": []string{sec, "ok"},
		"hdr":  http.Header{"Cookie": {"a=b"}, "Accept": {"*/*"}},
	}
	got := Redact(in, []string{sec}).(map[string]any)
	raw, _ := json.Marshal(got)
	want := `{"env":{"nested":["a [REDACTED]",3.5,true,null]},` +
		`"hdr":{"Accept":["*/*"]},` +
		`"headers":{"Content-Type":"application/json","X-Echo":"v=[REDACTED]"},` +
		`"list":["[REDACTED]","ok"],"method":"GET","url":"https://api.example/v1?key=[REDACTED]"}`
	if string(raw) != want {
		t.Errorf("Redact =\n%s\nwant\n%s", raw, want)
	}
	if in["headers"].(map[string]string)["Authorization"] != "Bearer "+sec {
		t.Error("Redact modified its input")
	}
}

func TestRedactHeadersOnlyCredential(t *testing.T) {
	// The seed's shape preview: a redacted credential and a missing one look alike.
	got, _ := json.Marshal(Redact(map[string]any{"headers": map[string]string{"Authorization": "Bearer x"}}, nil))
	if string(got) != `{"headers":{}}` {
		t.Errorf("got %s", got)
	}
}

func TestRedactForeign(t *testing.T) {
	type plan struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		N       int               `json:"n"`
	}
	got, _ := json.Marshal(Redact(&plan{URL: "u?t=abcdef", Headers: map[string]string{"x-api-key": "k"}, N: 7}, []string{"abcdef"}))
	if string(got) != `{"headers":{},"n":7,"url":"u?t=[REDACTED]"}` {
		t.Errorf("got %s", got)
	}
}
