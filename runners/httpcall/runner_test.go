package httpcall

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
)

func TestResults(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, `{"data":[1]}`)
		case "/created":
			w.WriteHeader(201)
			io.WriteString(w, "made")
		case "/not-modified":
			w.WriteHeader(304)
		case "/unauthorized":
			w.WriteHeader(401)
			io.WriteString(w, `{"error":"bad key"}`)
		case "/broken":
			w.WriteHeader(502)
			io.WriteString(w, "upstream down")
		case "/ten":
			io.WriteString(w, "0123456789")
		case "/eleven":
			io.WriteString(w, "0123456789A")
		case "/echo":
			io.WriteString(w, "you sent "+r.Header.Get("Authorization"))
		case "/slow-headers":
			<-r.Context().Done()
		case "/slow-body":
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	})
	refused := closedPort(t)
	fast := New(Config{Timeout: 150 * time.Millisecond, MaxResponse: 10})
	tests := []struct {
		name, target, auth string
		runner             *Runner
		want               string
		status             int
		material           bool
	}{
		{"200", "GET " + up.URL + "/ok", "", New(Config{}), `HTTP 200:{"data":[1]}`, 200, true},
		{"201", "POST " + up.URL + "/created", "", New(Config{}), "HTTP 201:made", 201, true},
		{"304", "GET " + up.URL + "/not-modified", "", New(Config{}), "HTTP 304:", 304, true},
		{"401", "GET " + up.URL + "/unauthorized", "bearer:K", New(Config{}), `ERR:http:401:{"error":"bad key"}`, 401, true},
		{"502", "GET " + up.URL + "/broken", "", New(Config{}), "ERR:http:502:upstream down", 502, true},
		{"connection refused", "GET http://" + refused + "/x", "", New(Config{}),
			"ERR:http:fetch:dial tcp " + refused + ": connect: connection refused", 0, false},
		{"query secret kept out of fetch errors", "GET http://" + refused + "/x", "query:key=K", New(Config{}),
			"ERR:http:fetch:dial tcp " + refused + ": connect: connection refused", 0, false},
		{"timeout before headers", "GET " + up.URL + "/slow-headers", "", fast, "ERR:http:fetch:timeout after 150ms", 0, false},
		{"timeout in body", "GET " + up.URL + "/slow-body", "", fast, "ERR:http:fetch:timeout after 150ms", 200, true},
		{"client's shorter timeout", "GET " + up.URL + "/slow-headers", "", New(Config{Client: &http.Client{Timeout: 120 * time.Millisecond}}),
			"ERR:http:fetch:timeout after 120ms", 0, false},
		{"at the cap", "GET " + up.URL + "/ten", "", fast, "HTTP 200:0123456789", 200, true},
		{"over the cap", "GET " + up.URL + "/eleven", "", fast,
			"ERR:http:too_large:10 bytes — the upstream answered 200 with a larger body, which was not kept; ask the upstream for less or raise the runner's response cap", 200, true},
		{"echoed credential redacted", "GET " + up.URL + "/echo", "bearer:K", New(Config{}), "HTTP 200:you sent Bearer [REDACTED]", 200, true},
		{"bad target", "GET", "", New(Config{}), `ERR:http:bad_target:target "GET" has no url; an http row's target is "METHOD url"`, 0, false},
		{"relative url", "GET /v1/models", "", New(Config{}), `ERR:http:bad_target:url "/v1/models" is not an absolute http or https URL`, 0, false},
		{"bad method", "G(T " + up.URL, "", New(Config{}), `ERR:http:bad_target:method "G(T" is not an HTTP method`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := invoke(tt.runner, httpRow("ROW", tt.target, tt.auth, ""), "", env{"K": "secret-value-42"}, false)
			if out.Result != tt.want || out.Status != tt.status || out.Material != tt.material {
				t.Fatalf("got  %q status=%d material=%v\nwant %q status=%d material=%v",
					out.Result, out.Status, out.Material, tt.want, tt.status, tt.material)
			}
			if strings.Contains(out.Result, "secret-value-42") {
				t.Fatal("credential in result")
			}
		})
	}
}

func TestTimeoutDefault(t *testing.T) {
	if r := New(Config{}); r.timeout != 30*time.Second || r.max != 1<<20 {
		t.Fatalf("defaults: timeout %v, max %d", r.timeout, r.max)
	}
	// The message names the configured timeout as the seed-style duration.
	if got := New(Config{}).timeout.String(); got != "30s" {
		t.Fatalf("30s prints as %q", got)
	}
}

func TestBody(t *testing.T) {
	up := newUpstream(t, nil)
	r := New(Config{})
	tests := []struct {
		name, target, content, body     string
		args                            bool // pass Args (false: only Body, the runner splits)
		wantMethod, wantPath, wantQuery string
		wantBody, wantType              string
	}{
		{"seed DIR_PATCH", "PATCH " + up.URL + "/api/directory/$1",
			"# ARGS: key | json_body\n# EX: [DIR_PATCH]ROUTER|{\"content\":\"new prompt text\"}[/DIR_PATCH]\n$2+",
			`ROUTER|{"content":"a|b"}`, true,
			"PATCH", "/api/directory/ROUTER", "", `{"content":"a|b"}`, "application/json"},
		{"DIR_PATCH from Body alone", "PATCH " + up.URL + "/api/directory/$1", "$2+",
			`ROUTER|{"content":"a|b"}`, false,
			"PATCH", "/api/directory/ROUTER", "", `{"content":"a|b"}`, "application/json"},
		{"json template with a quote", "POST " + up.URL + "/chat", `{"q":"$1","n":$2}`,
			`say "hi" \ bye|5`, true,
			"POST", "/chat", "", `{"q":"say \"hi\" \\ bye","n":5}`, "application/json"},
		{"url slots escaped", "GET " + up.URL + "/forecast/$3?latitude=$1&longitude=$2&current=temperature_2m", "",
			"37.77|-122.42|a/b c", true,
			"GET", "/forecast/a%2Fb%20c", "latitude=37.77&longitude=-122.42&current=temperature_2m", "", ""},
		{"form body", "POST " + up.URL + "/form", "to=$1&body=$2", "+1 555|hi & bye", true,
			"POST", "/form", "", "to=%2B1+555&body=hi+%26+bye", "application/x-www-form-urlencoded"},
		{"text body", "POST " + up.URL + "/text", "Hello $1, bye", "Ann", true,
			"POST", "/text", "", "Hello Ann, bye", "text/plain; charset=utf-8"},
		{"doc-only content sends no body", "POST " + up.URL + "/empty", "# WHAT: nothing", "", true,
			"POST", "/empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := &rowcall.Invocation{Row: httpRow("ROW", tt.target, "", tt.content), Body: tt.body}
			if tt.args {
				inv.Args = strings.Split(tt.body, "|")
			}
			out := r.Run(t.Context(), inv)
			if out.Result != "HTTP 200:ok" {
				t.Fatalf("Result = %q", out.Result)
			}
			got := up.seen()
			if got.Method != tt.wantMethod || got.Path != tt.wantPath || got.RawQuery != tt.wantQuery || got.Body != tt.wantBody {
				t.Fatalf("upstream saw %s %s ?%s body %q\nwant %s %s ?%s body %q",
					got.Method, got.Path, got.RawQuery, got.Body, tt.wantMethod, tt.wantPath, tt.wantQuery, tt.wantBody)
			}
			if ct := got.Header.Get("Content-Type"); ct != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", ct, tt.wantType)
			}
			if tt.wantType == "application/json" && !json.Valid([]byte(got.Body)) {
				t.Errorf("body %q is not valid JSON", got.Body)
			}
		})
	}
}

func TestUserAgent(t *testing.T) {
	up := newUpstream(t, nil)
	invoke(New(Config{UserAgent: "rowcall/test"}), httpRow("ROW", "GET "+up.URL, "", ""), "", nil, false)
	if ua := up.seen().Header.Get("User-Agent"); ua != "rowcall/test" {
		t.Fatalf("User-Agent = %q", ua)
	}
}
