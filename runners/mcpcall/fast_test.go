package mcpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/rowcall/rowcall"
)

// counting wraps an MCP handler and counts the tools/call requests sent by
// the fast path (ids from fastIDBase) and by the SDK.
type counting struct {
	next      http.Handler
	fast, sdk atomic.Int64
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if m := gjson.ParseBytes(b); m.Get("method").Str == "tools/call" {
			if m.Get("id").Int() >= fastIDBase {
				c.fast.Add(1)
			} else {
				c.sdk.Add(1)
			}
		}
	}
	c.next.ServeHTTP(w, r)
}

// bothWays calls each (tool, body) on server with the fast path and with
// the SDK's CallTool and fails the test when an output differs; it returns
// the outputs.
func bothWays(t *testing.T, client *http.Client, cfg Config, server string, rows map[string]*rowcall.Row, calls [][2]string) []rowcall.Output {
	t.Helper()
	fast, slow := newRunner(client, cfg), newRunner(client, cfg)
	slow.sdkOnly = true
	defer fast.Close()
	defer slow.Close()
	var outs []rowcall.Output
	for _, c := range calls {
		row := rows[c[0]]
		if row == nil {
			row = mcpRow(server, c[0])
		}
		// Made again when they differ: some answers say when they were made
		// (server-everything's resources, to the second), and the two calls
		// can fall either side of a second. A real difference stays.
		var a, b rowcall.Output
		for range 3 {
			a = run(fast, context.Background(), row, c[1], nil)
			b = run(slow, context.Background(), row, c[1], nil)
			if reflect.DeepEqual(a, b) {
				break
			}
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s %s(%s):\nfast %+v\nSDK  %+v", server, c[0], c[1], a, b)
		}
		outs = append(outs, a)
	}
	return outs
}

// The fast path answers every tool of the fault server as the SDK's
// CallTool does, over an SSE answer, a JSON answer and a server that keeps
// no session, with the default cap and with a cap the big answer passes.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	calls := [][2]string{{"echo", "hello|7"}, {"echo", ""}, {"structured", ""}, {"image", ""}, {"fails", ""}, {"big", ""}, {"pid", ""}, {"env", ""}, {"nosuch", ""}}
	for _, opts := range []struct {
		name string
		o    sdk.StreamableHTTPOptions
	}{{"sse", sdk.StreamableHTTPOptions{}}, {"json", sdk.StreamableHTTPOptions{JSONResponse: true}}, {"stateless", sdk.StreamableHTTPOptions{Stateless: true}}} {
		srv := faultServer(&faults{})
		h := &counting{next: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &opts.o)}
		s := httptest.NewServer(h)
		url := s.URL + "/mcp"
		for _, limit := range []int64{0, 1024} {
			bothWays(t, allowing(t, s), Config{MaxResponse: limit}, url, nil, calls)
		}
		want := int64(2 * len(calls)) // a stateless server negotiates 2026-07-28: the SDK's
		if opts.o.Stateless {
			want = 0
		}
		if h.fast.Load() != want || h.sdk.Load() != int64(2*len(calls))+(2*int64(len(calls))-want) {
			t.Errorf("%s: %d calls by the fast path, %d by the SDK; want %d by the fast path", opts.name, h.fast.Load(), h.sdk.Load(), want)
		}
		s.Close()
	}
}

// A session the server expired is initialized anew by a fast call, and a
// cancelled fast call reaches the server as notifications/cancelled (the
// same tests as the SDK path's, on a session the fast path speaks).
func TestFastPathExpiryAndCancel(t *testing.T) {
	u := newUpstream(t, "127.0.0.1:0")
	h := &counting{next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*u.handler.Load()).ServeHTTP(w, r) })}
	u.Config.Handler = h
	r := newRunner(allowing(t, u.Server), Config{})
	defer r.Close()
	row := mcpRow(u.URL+"/mcp", "echo")
	if out := run(r, context.Background(), row, "one", nil); out.Fail != nil {
		t.Fatal(out.Result)
	}
	u.restart()
	if out := run(r, context.Background(), row, "two", nil); out.Result != `{"text":"two"}` || u.f.inits.Load() != 2 {
		t.Fatalf("after expiry: %s (sessions %d)", out.Result, u.f.inits.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan rowcall.Output)
	go func() { done <- run(r, ctx, mcpRow(u.URL+"/mcp", "slow"), "", nil) }()
	waitFor(t, "the slow call to be sent", func() bool { return h.fast.Load() == 4 })
	cancel()
	if out := <-done; out.Fail == nil {
		t.Fatalf("a cancelled call succeeded: %s", out.Result)
	}
	waitFor(t, "the server to see the cancellation", func() bool { return u.f.cancelled.Load() == 1 })
	if h.sdk.Load() != 0 {
		t.Errorf("%d calls went through the SDK; want every one on the fast path", h.sdk.Load())
	}
}

// Every tool server-everything lists answers the same on the fast path as
// through the SDK's CallTool (the two toggles answer with their session's
// id, which differs by construction).
func TestFastPathAnswersAsTheSDKOnEverything(t *testing.T) {
	url, client := everythingHTTP(t)
	lister := newRunner(client, Config{})
	rows := toolRows(t, lister, url)
	lister.Close()
	bodies := map[string]string{"echo": "hello there", "get-sum": "2|3", "get-structured-content": "Chicago",
		"get-annotated-message": "success|true", "get-resource-links": "2", "get-resource-reference": "Text|1",
		"trigger-long-running-operation": "1|2"}
	var calls [][2]string
	for name := range rows {
		if strings.HasPrefix(name, "toggle-") {
			continue
		}
		calls = append(calls, [2]string{name, bodies[name]})
	}
	bothWays(t, client, Config{}, url, rows, calls)
}

// A stream the server closes before the answer is resumed with
// Last-Event-ID, and the server's requests during a call (ping, an
// elicitation the runner does not support) are answered, as by the SDK.
func TestFastPathResumesAndAnswersTheServer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "polling", Version: "1"}, nil)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	srv.AddTool(&sdk.Tool{Name: "polled", InputSchema: object}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: 20 * time.Millisecond})
		time.Sleep(50 * time.Millisecond) // answer while the client is away: the event store keeps it
		return text("after the stream closed"), nil
	})
	srv.AddTool(&sdk.Tool{Name: "asks", InputSchema: object}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if err := req.Session.Ping(ctx, nil); err != nil {
			return nil, err
		}
		_, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "name?", RequestedSchema: object})
		return text(fmt.Sprint("pinged; elicitation: ", err)), nil
	})
	h := &counting{next: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)})}
	var resumed atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer s.Close()
	outs := bothWays(t, allowing(t, s), Config{}, s.URL, nil, [][2]string{{"polled", ""}, {"asks", ""}})
	if outs[0].Result != "after the stream closed" || !strings.Contains(outs[1].Result, "pinged; elicitation: ") || !strings.Contains(outs[1].Result, "client does not support elicitation") {
		t.Errorf("answers: %q, %q", outs[0].Result, outs[1].Result)
	}
	if h.fast.Load() != 2 || resumed.Load() != 2 {
		t.Errorf("%d calls on the fast path (want 2), %d streams resumed (want 2: one each way)", h.fast.Load(), resumed.Load())
	}
}

// The fast path's request body is the bytes the SDK's CallTool encodes.
func TestFastPathBodyIsTheSDKs(t *testing.T) {
	for _, args := range []string{`{}`, `{"text":"a \"q\" <b>","n":7}`, "{ \"x\" : [1, 2]\n}", ``} {
		got, err := callBody(fastIDBase+1, "to<o>l", json.RawMessage(args), "")
		if err != nil {
			t.Fatal(err)
		}
		a := json.RawMessage(args)
		if args == "" {
			a = json.RawMessage(`{}`)
		}
		want, _ := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: mustID(t, int64(fastIDBase+1)), Method: "tools/call",
			Params: mustJSON(t, &sdk.CallToolParams{Name: "to<o>l", Arguments: a})})
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\nfast %s\nSDK  %s", args, got, want)
		}
	}
}

func mustID(t *testing.T, v int64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(v))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Calls one after another keep their connection: an answer on an event
// stream leaves the connection to the next call once the stream's end is
// read, as a JSON answer does, so the server sees a few connections, not
// one a call (a body closed before its end costs a new one).
func TestFastPathKeepsItsConnection(t *testing.T) {
	for _, opts := range []struct {
		name string
		o    sdk.StreamableHTTPOptions
	}{{"sse", sdk.StreamableHTTPOptions{}}, {"json", sdk.StreamableHTTPOptions{JSONResponse: true}}} {
		srv := faultServer(&faults{})
		h := &counting{next: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &opts.o)}
		s := httptest.NewUnstartedServer(h)
		var conns atomic.Int64
		s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
		s.Start()
		r := newRunner(allowing(t, s), Config{})
		const calls = 200
		for i := range calls {
			if out := run(r, context.Background(), mcpRow(s.URL+"/mcp", "echo"), fmt.Sprintf("call|%d", i), nil); out.Result != fmt.Sprintf(`{"n":%d,"text":"call"}`, i) {
				t.Fatalf("%s: call %d: %s", opts.name, i, out.Result)
			}
		}
		// The session's own requests (initialize, its standalone stream) and
		// a call started while the one before still reads its stream's end
		// may each take one; the other calls find one kept.
		if n := conns.Load(); n > 8 || h.fast.Load() != calls {
			t.Errorf("%s: %d connections for %d calls (%d by the fast path); want the calls to keep theirs", opts.name, n, calls, h.fast.Load())
		}
		r.Close()
		s.Close()
	}
}
