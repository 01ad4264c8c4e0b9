package redact_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/test/leak"
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
		// The echoes: \u002B for '+', \/ for '/', encodeURIComponent's raw '!'.
		{"json \\u002B", `{"echo":"sk-live-abc\/def\u002Bghi"}`, `{"echo":"[REDACTED]"}`, []string{sec}},
		{"json any subset any case", `"\u0073k-live-\u0061bc/def+g\u0068I"`, `"[REDACTED]"`, []string{"sk-live-abc/def+ghI"}},
		{"encodeURIComponent", "?k=a!b%2Fc%2Bd(e)*&x", "?k=[REDACTED]&x", []string{"a!b/c+d(e)*"}},
		{"percent any case mixed", "k=%73k%2dlive-abc%2Fdef%2bghi", "k=[REDACTED]", []string{sec}},
		{"space as plus", "q=pass+phrase+here", "q=[REDACTED]", []string{"pass phrase here"}},
		{"surrogate pair", `"key-\ud83d\ude00-end"`, `"[REDACTED]"`, []string{"key-\U0001F600-end"}},
		{"backslash both ways", `a\\b\cd`, `[REDACTED]cd`, []string{`a\b\`}},
		{"base64 with \\/", `{"b":"` + strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte("\xff\xff\xfe-secret-\xff\xff")), "/", `\/`) + `"}`,
			"", []string{"-secret-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redact.String(tt.in, tt.secrets)
			if tt.want == "" { // only: redacted, nothing survives
				if !strings.Contains(got, redact.Marker) || leak.Fragment(tt.secrets[0], leak.Views(got), nil) != "" {
					t.Errorf("redact.String(%q) = %q, want the secret redacted", tt.in, got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("redact.String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestStringBase64(t *testing.T) {
	const sec = "hunter2-password"
	for _, plain := range []string{sec + ":", "user:" + sec, "ab" + sec + "cd", "a" + sec} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			in := "Basic " + enc.EncodeToString([]byte(plain))
			out := redact.String(in, []string{sec})
			if !strings.Contains(out, redact.Marker) {
				t.Errorf("base64 of %q not redacted: %q", plain, out)
			}
			if frag := leak.Fragment(sec, leak.Views(out), nil); frag != "" {
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
		if !redact.SensitiveName(n) {
			t.Errorf("redact.SensitiveName(%q) = false, want true", n)
		}
	}
	for _, n := range no {
		if redact.SensitiveName(n) {
			t.Errorf("redact.SensitiveName(%q) = true, want false", n)
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
	got := redact.Redact(in, []string{sec}).(map[string]any)
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
	got, _ := json.Marshal(redact.Redact(map[string]any{"headers": map[string]string{"Authorization": "Bearer x"}}, nil))
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
	got, _ := json.Marshal(redact.Redact(&plan{URL: "u?t=abcdef", Headers: map[string]string{"x-api-key": "k"}, N: 7}, []string{"abcdef"}))
	if string(got) != `{"headers":{},"n":7,"url":"u?t=[REDACTED]"}` {
		t.Errorf("got %s", got)
	}
}

func TestClip(t *testing.T) {
	const sec = "sk-live-0123456789abcdefghijklmno" // 33 bytes, like the issue's
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short text kept", "ok", 10, "ok"},
		{"cut on a character boundary", "héllo", 2, "h…"},
		{"no secrets: only cut", "abcdef", 3, "abc…"},
		{"secret across the cut is redacted first", "error: key " + sec + " is invalid", 30, "error: key [REDACTED] is inval…"},
		{"cut inside the marker", "error: key " + sec, 15, "error: key [RED…"},
		{"secret's beginning at the edge goes", "a partial sk-live-0123 left " + sec, 22, "a partial …"},
		{"escaped beginning at the edge goes", `echo sk\u002Dlive\/0123`, 100, `echo sk\u002Dlive\/0123`},
		{"escaped beginning cut at the edge goes", `echo sk\u002Dlive-0123 more`, 21, "echo …"},
		{"cut inside an escape", `echo sk-live\u002D0123`, 15, "echo …"},
		{"beginning shorter than redact.MinSecretLen stays", "tail sk-", 7, "tail sk…"},
		{"negative length", "abc", -1, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.Clip(tt.in, tt.n, []string{sec}); got != tt.want {
				t.Errorf("redact.Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}
