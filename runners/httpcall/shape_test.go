package httpcall

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestShape(t *testing.T) {
	up := newUpstream(t, nil)
	tokens := newUpstream(t, nil)
	r := New(Config{})
	const secret = "xai-SECRET-0123456789"
	full := env{"GROK_API_KEY": secret, "ID": "client-7", "CS": secret}
	oauth := `oauth:{"token_url":"` + tokens.URL + `/token","client_id":"$ID","client_secret":"$CS"}`
	tests := []struct {
		name, target, auth, content, body string
		env                               env
		wantResult, wantPlan              string
	}{
		{"seed GROK_MODELS, credential present", "GET " + up.URL + "/v1/models", "bearer:GROK_API_KEY", "# WHAT: List every model", "", full,
			"SHAPE:http:GET " + up.URL + "/v1/models",
			`{"body":"","headers":{},"method":"GET","url":"` + up.URL + `/v1/models"}`},
		{"seed GROK_MODELS, variable missing", "GET " + up.URL + "/v1/models", "bearer:GROK_API_KEY", "# WHAT: List every model", "", env{},
			"SHAPE:http:GET " + up.URL + "/v1/models",
			`{"body":"","headers":{},"method":"GET","url":"` + up.URL + `/v1/models"}`},
		{"basic", "GET " + up.URL, "basic:GROK_API_KEY", "", "", full,
			"SHAPE:http:GET " + up.URL, `{"body":"","headers":{},"method":"GET","url":"` + up.URL + `"}`},
		{"query credential", "GET " + up.URL + "/q?city=$1", "query:appid=GROK_API_KEY", "", "Oslo", full,
			"SHAPE:http:GET " + up.URL + "/q?city=Oslo&appid=[REDACTED]",
			`{"body":"","headers":{},"method":"GET","url":"` + up.URL + `/q?city=Oslo\u0026appid=[REDACTED]"}`},
		{"headers credential and constant", "POST " + up.URL + "/x", `headers:{"X-Custom":"k=$GROK_API_KEY","Accept":"text/csv"}`, `{"a":"$1"}`, "v", full,
			"SHAPE:http:POST " + up.URL + "/x",
			`{"body":"{\"a\":\"v\"}","headers":{"Accept":"text/csv","Content-Type":"application/json"},"method":"POST","url":"` + up.URL + `/x"}`},
		{"oauth sends no token request", "DELETE " + up.URL + "/item/$1", oauth, "", "42", full,
			"SHAPE:http:DELETE " + up.URL + "/item/42",
			`{"body":"","headers":{},"method":"DELETE","url":"` + up.URL + `/item/42"}`},
		{"secret passed as an argument is still redacted", "POST " + up.URL + "/echo", "bearer:GROK_API_KEY", "$1", secret, full,
			"SHAPE:http:POST " + up.URL + "/echo",
			`{"body":"[REDACTED]","headers":{"Content-Type":"text/plain; charset=utf-8"},"method":"POST","url":"` + up.URL + `/echo"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := invoke(r, httpRow("ROW", tt.target, tt.auth, tt.content), tt.body, tt.env, true)
			plan, err := json.Marshal(out.Plan)
			if err != nil {
				t.Fatal(err)
			}
			if out.Result != tt.wantResult || string(plan) != tt.wantPlan {
				t.Fatalf("Result %q\nwant   %q\nPlan %s\nwant %s", out.Result, tt.wantResult, plan, tt.wantPlan)
			}
			if strings.Contains(string(plan), secret) || strings.Contains(out.Result, secret) {
				t.Fatal("secret in shape output")
			}
			if out.Status != 0 || out.Material {
				t.Fatalf("Status %d Material %v", out.Status, out.Material)
			}
		})
	}
	if up.hits.Load() != 0 || tokens.hits.Load() != 0 {
		t.Fatalf("shape mode sent requests: upstream %d, token endpoint %d", up.hits.Load(), tokens.hits.Load())
	}
}

// A short credential is below redact's search length; the plan must still
// not carry it, because the runner removes credentials structurally.
func TestShapeShortCredential(t *testing.T) {
	r := New(Config{})
	for _, auth := range []string{"bearer:K", "basic:K", "query:k=K", `headers:{"X-K":"$K"}`} {
		out := invoke(r, httpRow("ROW", "GET http://api.test/v1", auth, ""), "", env{"K": "z9"}, true)
		plan, _ := json.Marshal(out.Plan)
		if strings.Contains(string(plan), "z9") || strings.Contains(out.Result, "z9") {
			t.Errorf("%s: short credential in %s / %s", auth, plan, out.Result)
		}
	}
}
