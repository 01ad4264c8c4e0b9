package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
)

// rawPost is one POST to srv as the owner, with the headers an MCP client
// sends (and extra on top); it returns the status, the headers a client
// reads, and the body.
func rawPost(t *testing.T, srv *httptest.Server, session, body string, extra map[string]string) (int, string, string) {
	return rawPostTo(t, srv, "", session, body, extra)
}

// rawPostTo is rawPost to srv's address followed by query.
func rawPostTo(t *testing.T, srv *httptest.Server, query, session, body string, extra map[string]string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+query, strings.NewReader(body))
	req.Header.Set("X-Terminal-Key", "owner")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var head []string
	for _, k := range []string{"Content-Type", "Cache-Control", "Connection", "Mcp-Session-Id", "Allow"} { // not the framing (Content-Length or chunked)
		head = append(head, k+": "+strings.Join(res.Header.Values(k), ","))
	}
	return res.StatusCode, strings.Join(head, "\n"), string(b)
}

// initSession opens a session with raw requests; it returns its id.
func initSession(t *testing.T, srv *httptest.Server, version string) string {
	t.Helper()
	return initSessionWith(t, srv, version, `{}`)
}

// initSessionWith opens a session of a client declaring capabilities caps.
func initSessionWith(t *testing.T, srv *httptest.Server, version, caps string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("X-Terminal-Key", "owner")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	id := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %q", res.StatusCode, id)
	}
	if code, _, body := rawPost(t, srv, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); code != 202 {
		t.Fatalf("initialized: %d %s", code, body)
	}
	return id
}

// anonymous replaces what differs from call to call (the receipt's id and
// the trace id) in an answer's body with placeholders.
func anonymous(body string) string {
	body = approvalID.ReplaceAllString(receiptID.ReplaceAllString(body, "INVOCATION"), "APPROVAL")
	return expiresAt.ReplaceAllString(traceID.ReplaceAllString(body, `"trace":"TRACE"`), `"expires_at":"EXPIRES"`)
}

var receiptID, traceID, approvalID = regexp.MustCompile(`inv_[0-9a-z]+`), regexp.MustCompile(`"trace":"t_[0-9a-z]+"`), regexp.MustCompile(`apr_[0-9a-z]+`)
var expiresAt = regexp.MustCompile(`"expires_at":"[^"]+"`)

// Every request the fast path might see is sent twice, once with the fast
// path off (the SDK answers) and once with it on, and the answers must be
// the same bytes (status, the headers a client reads, the body, with the
// receipt and trace ids, which differ from call to call, replaced). The
// cases the fast path must take are counted, so a fast path that silently
// handed everything to the SDK would fail too.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	t.Run("sessions", func(t *testing.T) { sameAnswers(t, false) })
	t.Run("stateless", func(t *testing.T) { sameAnswers(t, true) })
}

// sameAnswers is TestFastPathAnswersAsTheSDK on a handler with sessions or
// a stateless one (the worker's), where the fast path takes call_capability
// alone and a session id means nothing.
func sameAnswers(t *testing.T, stateless bool) {
	srv, store := newHandler(t, Config{Stateless: stateless, Base: func(r *http.Request) string { return "http://" + r.Host }})
	h := srv.Config.Handler.(*Handler)
	// Rows that declare their output: one the upstream's answer conforms
	// to, one it does not (output.go).
	for key, schema := range map[string]string{"TEMP_OUT": `{"type":"object","properties":{"temperature_2m":{"type":"number"}},"required":["temperature_2m"]}`,
		"TEMP_BADOUT": `{"type":"object","required":["humidity"]}`} {
		row := rowcall.NewRow(key, rowcall.TypeHTTP)
		row.Target, row.Content, row.OutputSchema = mustRow(t, store, "TEMP").Target, "# WHAT: Current temperature, structured", schema
		if _, err := store.Create(context.Background(), row); err != nil {
			t.Fatal(err)
		}
	}
	// A row that waits for a person's approval (approval.go).
	appr := rowcall.NewRow("TEMP_APPR", rowcall.TypeHTTP)
	appr.Target, appr.Content, appr.Approval = mustRow(t, store, "TEMP").Target, "# WHAT: Current temperature, approved", 1
	if _, err := store.Create(context.Background(), appr); err != nil {
		t.Fatal(err)
	}
	sid, urlSid := "ANY", "ANY"
	if !stateless {
		sid = initSession(t, srv, "2025-06-18")
		urlSid = initSessionWith(t, srv, "2025-11-25", `{"elicitation":{"url":{}}}`)
	}
	v := map[string]string{"MCP-Protocol-Version": "2025-06-18"}
	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
	}
	cases := []struct {
		name, session, body string
		header              map[string]string
		fast                bool
		query               string
	}{
		{"row tool", sid, call("1", `{"name":"TEMP","arguments":{"args":"1|2"}}`), v, true, ""},
		{"no protocol header", sid, call("2", `{"name":"TEMP","arguments":{"args":"1|2"}}`), nil, true, ""},
		{"string id, keys reordered, spaces", sid, ` {"params": {"arguments": {"args" : "3|4"}, "name":"TEMP"}, "method":"tools/call", "id":"a-1", "jsonrpc":"2.0"} `, v, true, ""},
		{"row tool, bad arguments", sid, call("3", `{"name":"TEMP","arguments":{"nope":1}}`), v, true, ""},
		{"row tool, no arguments", sid, call("4", `{"name":"TEMP"}`), v, true, ""},
		{"call_capability", sid, call("5", `{"name":"call_capability","arguments":{"key":"TEMP","args":"5|6"}}`), v, true, ""},
		{"call_capability, unknown key", sid, call("6", `{"name":"call_capability","arguments":{"key":"TEMPP","args":"1"}}`), v, true, ""},
		{"call_capability, no key", sid, call("7", `{"name":"call_capability","arguments":{"args":"1"}}`), v, true, ""},
		{"search", sid, call("8", `{"name":"search_capabilities","arguments":{"query":"current temperature"}}`), v, true, ""},
		{"search, HTML in the answer", sid, call("9", `{"name":"search_capabilities","arguments":{"query":"<b>&amp;</b> \u00e9\u2028"}}`), v, true, ""},
		{"unknown tool", sid, call("10", `{"name":"NOPE","arguments":{}}`), v, false, ""},
		{"name not a string", sid, call("11", `{"name":7}`), v, false, ""},
		{"no params", sid, `{"jsonrpc":"2.0","id":12,"method":"tools/call"}`, v, false, ""},
		{"_meta, progress token", sid, call("13", `{"name":"TEMP","arguments":{"args":"1|2"},"_meta":{"progressToken":1}}`), v, true, ""}, // a call that reports no progress is answered as plain JSON
		{"_meta first, string progress token", sid, call("31", `{"_meta":{"progressToken":"p-1"},"name":"call_capability","arguments":{"key":"TEMP","args":"1|2"}}`), v, true, ""},
		{"_meta, a progress token not a string or number", sid, call("39", `{"name":"call_capability","arguments":{"key":"TEMP","args":"1|2"},"_meta":{"progressToken":{"a":1}}}`), v, false, ""},
		{"_meta, empty", sid, call("32", `{"name":"call_capability","arguments":{"key":"TEMP","args":"1|2"},"_meta":{}}`), v, true, ""},
		{"_meta, a vendor's key", sid, call("33", `{"name":"call_capability","arguments":{"key":"TEMP","args":"1|2"},"_meta":{"com.example/trace":{"a":[1,"x"]}}}`), v, true, ""},
		{"_meta, not an object", sid, call("34", `{"name":"TEMP","arguments":{"args":"1|2"},"_meta":5}`), v, false, ""},
		{"_meta, null", sid, call("35", `{"name":"TEMP","arguments":{"args":"1|2"},"_meta":null}`), v, false, ""},
		{"_meta, twice", sid, call("36", `{"name":"TEMP","arguments":{"args":"1|2"},"_meta":{},"_meta":{}}`), v, false, ""},
		{"_meta, the protocol's own key", sid, call("37", `{"name":"call_capability","arguments":{"key":"TEMP","args":"1|2"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}`), v, false, ""},
		{"nested as deep as the SDK decodes", sid, call("38", `{"name":"call_capability","arguments":{"key":"TEMP","args":`+strings.Repeat("[", 997)+strings.Repeat("]", 997)+`}}`), v, true, ""},
		{"nested deeper than the SDK decodes", sid, call("39", `{"name":"call_capability","arguments":{"key":"TEMP","args":`+strings.Repeat("[", 998)+strings.Repeat("]", 998)+`}}`), v, false, ""},
		{"notification form", sid, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"TEMP"}}`, v, false, ""},
		{"float id", sid, call("14.5", `{"name":"TEMP","arguments":{"args":"1|2"}}`), v, false, ""},
		{"escaped string id", sid, call(`"\u0041"`, `{"name":"TEMP","arguments":{"args":"1|2"}}`), v, false, ""},
		{"wrong case key", sid, `{"jsonrpc":"2.0","id":15,"Method":"tools/call","params":{"name":"TEMP"}}`, v, false, ""},
		{"duplicate key", sid, `{"jsonrpc":"2.0","id":16,"method":"tools/call","method":"tools/list","params":{"name":"TEMP"}}`, v, false, ""},
		{"batch", sid, `[` + call("17", `{"name":"TEMP","arguments":{"args":"1|2"}}`) + `]`, v, false, ""},
		{"batch, old protocol", sid, `[` + call("18", `{"name":"TEMP","arguments":{"args":"1|2"}}`) + `]`, map[string]string{"MCP-Protocol-Version": "2025-03-26"}, false, ""},
		{"tools/list", sid, `{"jsonrpc":"2.0","id":19,"method":"tools/list"}`, v, false, ""},
		{"not JSON", sid, `{"jsonrpc":"2.0",`, v, false, ""},
		{"unknown session", "NOSUCHSESSION", call("20", `{"name":"TEMP","arguments":{"args":"1|2"}}`), v, false, ""},
		{"no session", "", call("21", `{"name":"TEMP","arguments":{"args":"1|2"}}`), v, false, ""},
		{"unsupported protocol version", sid, call("22", `{"name":"TEMP","arguments":{"args":"1|2"}}`), map[string]string{"MCP-Protocol-Version": "2099-01-01"}, false, ""},
		{"newest protocol on a stateful server", sid, call("23", `{"name":"TEMP","arguments":{"args":"1|2"}}`), map[string]string{"MCP-Protocol-Version": "2026-07-28"}, false, ""},
		{"content type", sid, call("24", `{"name":"TEMP","arguments":{"args":"1|2"}}`), map[string]string{"Content-Type": "text/plain"}, false, ""},
		{"content type with charset", sid, call("25", `{"name":"TEMP","arguments":{"args":"1|2"}}`), map[string]string{"Content-Type": "application/json; charset=utf-8"}, true, ""},
		{"accept", sid, call("26", `{"name":"TEMP","arguments":{"args":"1|2"}}`), map[string]string{"Accept": "application/json"}, false, ""},
		{"accept */*", sid, call("27", `{"name":"TEMP","arguments":{"args":"1|2"}}`), map[string]string{"Accept": "*/*"}, true, ""},
		{"Last-Event-ID", sid, call("28", `{"name":"TEMP","arguments":{"args":"1|2"}}`), map[string]string{"Last-Event-ID": "x_1"}, false, ""},
		{"cancel of nothing in flight", sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`, v, false, ""},
		{"bad page_size", sid, call("29", `{"name":"call_capability","arguments":{"key":"TEMP","args":"1|2"}}`), v, !stateless, "?page_size=0"},
		{"page_size", sid, call("30", `{"name":"call_capability","arguments":{"key":"TEMP","args":"1|2"}}`), v, true, "?page_size=5"},
		{"row tool with output_schema", sid, call("40", `{"name":"TEMP_OUT","arguments":{"args":"1|2"}}`), v, true, ""},
		{"row tool, output not as declared", sid, call("41", `{"name":"TEMP_BADOUT","arguments":{"args":"1|2"}}`), v, true, ""},
		{"row tool with output_schema, bad arguments", sid, call("42", `{"name":"TEMP_OUT","arguments":{"nope":1}}`), v, true, ""},
		{"a call that waits for approval", sid, call("43", `{"name":"call_capability","arguments":{"key":"TEMP_APPR","args":"1|2"}}`), v, true, ""},
		// The answers' forms: suiteApprovalsElicit (test/).
		{"a call that waits for approval, URL elicitation", urlSid, call("44", `{"name":"TEMP_APPR","arguments":{"args":"1|2"}}`), map[string]string{"MCP-Protocol-Version": "2025-11-25"}, true, ""},
	}
	// The newest protocol (stateless servers only): each request carries
	// its version, client info and capabilities in _meta (as the Go SDK
	// client sends them here) and names its method and tool in headers.
	newest := func(name string, extra ...string) map[string]string {
		hd := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
		for i := 0; i+1 < len(extra); i += 2 {
			hd[extra[i]] = extra[i+1]
		}
		return hd
	}
	const caps, info, version = `"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}`,
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}`, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	perRequest := func(id, name, args string, meta ...string) string {
		return call(id, `{"_meta":{`+strings.Join(meta, ",")+`},"name":"`+name+`","arguments":`+args+`}`)
	}
	capArgs := `{"args":"1|2","key":"TEMP"}`
	for _, c := range []struct {
		name, body string
		header     map[string]string
		fast       bool
	}{
		{"newest protocol, the Go SDK client's call", perRequest("40", CallTool, capArgs, caps, info, version), newest(CallTool), true},
		{"newest protocol, an unknown key", perRequest("41", CallTool, `{"key":"TEMPP","args":"1"}`, caps, info, version), newest(CallTool), true},
		{"newest protocol, no client info, no capabilities declared", perRequest("42", CallTool, capArgs, `"io.modelcontextprotocol/clientCapabilities":{}`, version), newest(CallTool), true},
		{"newest protocol, a progress token too", perRequest("43", CallTool, capArgs, caps, info, version, `"progressToken":7`), newest(CallTool), true},
		{"newest protocol, every capability", perRequest("44", CallTool, capArgs, `"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{"context":{},"tools":{}},"elicitation":{"form":{}},"experimental":{"x":1},"extensions":{"y":{}}}`, info, version), newest(CallTool), true},
		{"newest protocol, a row tool", perRequest("45", "TEMP", `{"args":"1|2"}`, caps, info, version), newest("TEMP"), true},
		{"newest protocol, no capabilities", perRequest("46", CallTool, capArgs, info, version), newest(CallTool), false},
		{"newest protocol, capabilities of the wrong type", perRequest("47", CallTool, capArgs, `"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":"yes"}}`, info, version), newest(CallTool), false},
		{"newest protocol, capabilities null", perRequest("48", CallTool, capArgs, `"io.modelcontextprotocol/clientCapabilities":null`, info, version), newest(CallTool), false},
		{"newest protocol, a capability's name in another case", perRequest("49", CallTool, capArgs, `"io.modelcontextprotocol/clientCapabilities":{"Roots":{"listChanged":true}}`, info, version), newest(CallTool), false},
		{"newest protocol, client info of the wrong type", perRequest("50", CallTool, capArgs, caps, `"io.modelcontextprotocol/clientInfo":{"name":5}`, version), newest(CallTool), false},
		{"newest protocol, _meta's version not the header's", perRequest("51", CallTool, capArgs, caps, info, `"io.modelcontextprotocol/protocolVersion":"2025-11-25"`), newest(CallTool), false},
		{"newest protocol, no version in _meta", perRequest("52", CallTool, capArgs, caps, info), newest(CallTool), false},
		{"newest protocol, no _meta", call("53", `{"name":"call_capability","arguments":`+capArgs+`}`), newest(CallTool), false},
		{"newest protocol, a log level", perRequest("54", CallTool, capArgs, caps, info, version, `"io.modelcontextprotocol/logLevel":"debug"`), newest(CallTool), false},
		{"newest protocol, no Mcp-Name", perRequest("55", CallTool, capArgs, caps, info, version), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}, false},
		{"newest protocol, another Mcp-Name", perRequest("56", CallTool, capArgs, caps, info, version), newest("TEMP"), false},
		{"newest protocol, another Mcp-Method", perRequest("57", CallTool, capArgs, caps, info, version), newest(CallTool, "Mcp-Method", "tools/list"), false},
		{"newest protocol, no protocol header", perRequest("58", CallTool, capArgs, caps, info, version), map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": CallTool}, false},
		{"newest protocol, a call that waits for approval", perRequest("59", CallTool, `{"args":"1|2","key":"TEMP_APPR"}`, caps, info, version), newest(CallTool), true},
		{"newest protocol, a call that waits for approval, URL elicitation", perRequest("60", CallTool, `{"args":"1|2","key":"TEMP_APPR"}`,
			`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}}}`, info, version), newest(CallTool), true},
	} {
		cases = append(cases, struct {
			name, session, body string
			header              map[string]string
			fast                bool
			query               string
		}{c.name, sid, c.body, c.header, c.fast && stateless, ""}) // a stateful server refuses the newest protocol
	}
	for _, c := range cases {
		if stateless {
			// Stateless, a session id names nothing: a plain call of a tool
			// the caller may see is fast, unless it searches (the listed
			// rows take the projection).
			c.fast = (c.fast || c.name == "unknown session" || c.name == "no session") &&
				!strings.Contains(c.body, `"name":"search_capabilities"`)
		}
		h.slow.Store(true)
		code0, head0, body0 := rawPostTo(t, srv, c.query, c.session, c.body, c.header)
		h.slow.Store(false)
		before := h.fast.Load()
		code1, head1, body1 := rawPostTo(t, srv, c.query, c.session, c.body, c.header)
		if took := h.fast.Load() > before; took != c.fast {
			t.Errorf("%s: fast path taken %v, want %v", c.name, took, c.fast)
		}
		if code0 != code1 || head0 != head1 || anonymous(body0) != anonymous(body1) {
			t.Errorf("%s: the SDK answered\n%d\n%s\n%s\nthe fast path\n%d\n%s\n%s", c.name, code0, head0, body0, code1, head1, body1)
		}
	}
}

func mustRow(t *testing.T, store *counted, key string) rowcall.Row {
	t.Helper()
	row, err := store.Lookup(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// A session whose calls all take the fast path stays open while they come
// (the SDK, which no longer sees them, would have timed it out), and one
// idle for Config.Idle is closed: the next request is answered 404.
func TestFastPathSessionIdle(t *testing.T) {
	srv, _ := newHandler(t, Config{Limits: Limits{Idle: time.Second}, Poll: 50 * time.Millisecond})
	cs := connect(t, srv)
	var last time.Time // the last call's answer
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "TEMP", Arguments: map[string]any{"args": "1|2"}}); err != nil || res.IsError {
			t.Fatalf("a call on a session in use: %v %v", res, err)
		}
		last = time.Now()
		time.Sleep(100 * time.Millisecond)
	}
	if n := srv.Config.Handler.(*Handler).fast.Load(); n < 10 {
		t.Fatalf("%d calls took the fast path", n)
	}
	h := srv.Config.Handler.(*Handler)
	for deadline := last.Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		h.mu.Lock()
		open := len(h.sessions)
		h.mu.Unlock()
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a session idle for 30 s is still open")
		}
	}
	// Idle counts from the handler's end of the call, a moment before the
	// client had its answer: half a second of room for that moment.
	if since := time.Since(last); since < 500*time.Millisecond {
		t.Fatalf("closed %s after its last call, before Config.Idle", since)
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "TEMP", Arguments: map[string]any{"args": "1|2"}}); err == nil {
		t.Fatal("a session idle for Config.Idle still answers")
	}
}

// A client that gives up on a call sends notifications/cancelled: a call the
// fast path is running is cancelled as the SDK cancelled its handler (the
// upstream request is abandoned).
func TestFastPathCancel(t *testing.T) {
	srv, store := newHandler(t, Config{})
	arrived, gone := make(chan struct{}), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(20 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	row := rowcall.NewRow("SLOW", rowcall.TypeHTTP)
	row.Target = "GET " + slow.URL + "/wait"
	row.Content = "# WHAT: An upstream that waits"
	if _, err := store.Create(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_capability", Arguments: map[string]any{"key": "SLOW"}})
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the call went on after the client cancelled it")
	}
	if n := srv.Config.Handler.(*Handler).fast.Load(); n != 1 {
		t.Fatalf("the fast path took %d calls, not the one", n)
	}
}

// Stateless (the worker), a call_capability is answered without building
// the caller's projection: no directory page is read for it (on D1, rows
// read are billed), as POST /api/dispatch reads none.
func TestFastPathStatelessReadsNoPage(t *testing.T) {
	srv, store := newHandler(t, Config{Stateless: true})
	for i := range 3 {
		code, _, body := rawPost(t, srv, "", `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"call_capability","arguments":{"key":"TEMP","args":"1|2"}}}`,
			map[string]string{"MCP-Protocol-Version": "2025-06-18"})
		if code != 200 || !strings.Contains(body, "latitude=1") {
			t.Fatalf("call: %d %s", code, body)
		}
	}
	if n := store.lists.Load(); n != 0 {
		t.Fatalf("3 calls read %d directory pages", n)
	}
	// The Go SDK's client, on the newest protocol (its choice with a
	// stateless server: each request carries the protocol in _meta).
	cs := connectAs(t, srv, nil)
	if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
		t.Fatalf("the Go SDK client negotiated %s", v)
	}
	before := store.lists.Load()
	for range 3 {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: CallTool, Arguments: map[string]any{"key": "TEMP", "args": "1|2"}})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "latitude=1") {
			t.Fatalf("call: %v %v", res, err)
		}
	}
	if n := store.lists.Load() - before; n != 0 {
		t.Fatalf("3 calls of the Go SDK client read %d directory pages", n)
	}
}
