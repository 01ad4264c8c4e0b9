package mcpcall

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/rowcall/rowcall"
)

// recorder is a reverse proxy in front of an MCP server that keeps every
// message posted to it and the session ids the server gave.
type recorder struct {
	*httptest.Server
	mu       sync.Mutex
	posted   []gjson.Result
	sessions []string
	deletes  int
}

func newRecorder(t *testing.T, target string) *recorder {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // event streams pass as they are written
	proxy.ModifyResponse = func(resp *http.Response) error {
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			rec.mu.Lock()
			rec.sessions = append(rec.sessions, id)
			rec.mu.Unlock()
		}
		return nil
	}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		switch r.Method {
		case http.MethodPost:
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			rec.posted = append(rec.posted, gjson.ParseBytes(b))
		case http.MethodDelete:
			rec.deletes++
		}
		rec.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// messages returns the posted messages of the method, and the DELETEs seen.
func (rec *recorder) messages(method string) ([]gjson.Result, int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var ms []gjson.Result
	for _, m := range rec.posted {
		if m.Get("method").Str == method {
			ms = append(ms, m)
		}
	}
	return ms, rec.deletes
}

// recordedEverything starts server-everything over streamable HTTP behind a
// recorder, and returns its own URL, the recorder, a runner that reaches
// the server through the recorder, and one row per tool.
func recordedEverything(t *testing.T) (string, *recorder, *Runner, map[string]*rowcall.Row) {
	everything, _ := everythingHTTP(t)
	rec := newRecorder(t, everything)
	r := newRunner(allowing(t, rec.Server), Config{})
	t.Cleanup(r.Close)
	return everything, rec, r, toolRows(t, r, rec.URL+"/mcp")
}

// One of two calls on server-everything's pooled session cancelled by its
// client is cancelled upstream by its own request id
// (notifications/cancelled), and the other call, in flight on the same
// session, ends with its answer: the session is neither closed nor
// replaced, and serves the next call.
func TestCancelLeavesTheSessionToOtherCalls(t *testing.T) {
	_, rec, r, rows := recordedEverything(t)
	long := rows["trigger-long-running-operation"]
	if long == nil {
		t.Fatalf("no trigger-long-running-operation among %d tools", len(rows))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled, other := make(chan rowcall.Output), make(chan rowcall.Output)
	go func() { cancelled <- run(r, ctx, long, "60|2", nil) }()
	go func() { other <- run(r, context.Background(), long, "3|3", nil) }()
	var calls []gjson.Result
	waitFor(t, "both calls to reach the server", func() bool {
		calls, _ = rec.messages("tools/call")
		return len(calls) == 2
	})
	var id int64
	for _, c := range calls {
		if c.Get("params.arguments.duration").Int() == 60 {
			id = c.Get("id").Int()
		}
	}
	cancel()
	if out := <-cancelled; out.Fail == nil {
		t.Fatalf("the cancelled call answered: %s", out.Result)
	}
	if out := <-other; out.Fail != nil || !strings.Contains(out.Result, "Long running operation completed") {
		t.Fatalf("the other call on the session: %s", out.Result)
	}
	waitFor(t, "notifications/cancelled for the cancelled call", func() bool {
		ms, _ := rec.messages("notifications/cancelled")
		for _, m := range ms {
			if m.Get("params.requestId").Int() == id {
				return true
			}
		}
		return false
	})
	if out := run(r, context.Background(), rows["echo"], "after", nil); out.Result != "Echo: after" {
		t.Fatalf("after the cancel: %s", out.Result)
	}
	if inits, deletes := rec.messages("initialize"); len(inits) != 1 || deletes != 0 {
		t.Fatalf("%d sessions initialized and %d closed; want the one session kept", len(inits), deletes)
	}
}

// A pooled session server-everything no longer has (it answers 400 "No
// valid session ID" before running anything) is replaced, and the call runs
// on the new session: once.
func TestForgottenSessionIsReplaced(t *testing.T) {
	everything, rec, r, rows := recordedEverything(t)
	if out := run(r, context.Background(), rows["echo"], "one", nil); out.Result != "Echo: one" {
		t.Fatal(out.Result)
	}
	rec.mu.Lock()
	session := rec.sessions[0]
	rec.mu.Unlock()
	req, _ := http.NewRequest(http.MethodDelete, everything, nil)
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if out := run(r, context.Background(), rows["echo"], "two", nil); out.Result != "Echo: two" {
		t.Fatalf("on a session the server forgot: %s", out.Result)
	}
	calls, _ := rec.messages("tools/call")
	inits, _ := rec.messages("initialize")
	if len(calls) != 3 || len(inits) != 2 {
		t.Fatalf("%d tools/call and %d sessions; want the call sent twice (refused, then on a new session)", len(calls), len(inits))
	}
}
