package test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// What /mcp offers beside tools, through the official Go SDK client on the
// embedded host: the per-request protocol (2026-07-28) beside sessions, the
// tool list's order and cache hints, tool annotations, the contract documents
// as resources, and completion of their keys.

// A client of the per-request protocol gets no session: each request carries
// its version in _meta, and the host answers it as the worker does; its
// subscriptions/listen stream hears list_changed. A 2025-11-25 client still
// gets a session. tools/list is in one order (by name) every time, with the
// cache hints of a per-credential answer.
func TestMCPPerRequestProtocol(t *testing.T) {
	h := startHost(t, allowLoopback)
	up := mcpRows(t, h)

	newer := connectMCPAt(t, h, "x-terminal-key", h.Key, "")
	if v := newer.cs.InitializeResult().ProtocolVersion; v != "2026-07-28" || newer.cs.ID() != "" {
		t.Fatalf("newest protocol: version %q, session id %q", v, newer.cs.ID())
	}
	older := connectMCP(t, h, "x-terminal-key", h.Key)
	if v := older.cs.InitializeResult().ProtocolVersion; v != "2025-11-25" || older.cs.ID() == "" {
		t.Fatalf("sessions: version %q, session id %q", v, older.cs.ID())
	}

	ctx := context.Background()
	var first []string
	for range 3 {
		list, err := newer.cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if list.TTLMs != 30000 || list.CacheScope != "private" {
			t.Fatalf("tools/list cache hints: ttlMs %d, cacheScope %q", list.TTLMs, list.CacheScope)
		}
		var got []string
		for _, tool := range list.Tools {
			got = append(got, tool.Name)
		}
		if !slices.IsSorted(got) || (first != nil && !slices.Equal(got, first)) {
			t.Fatalf("tools/list order %v, before %v", got, first)
		}
		first = got
	}
	checkSucceeded(t, h, newer.call(t, "ZZ_TEST_TEMPERATURE", map[string]any{"args": "37.77|-122.42"}), "temperature_2m")
	checkSucceeded(t, h, newer.call(t, "call_capability", map[string]any{"key": "WEATHER_TYPED", "arguments": map[string]any{"latitude": 1, "longitude": 2}}), "temperature_2m")

	// list_changed on the listen stream, for a row created through the API.
	newer.drain()
	createRow(t, h, map[string]any{"key": "NEW_TOOL", "type": "http", "category": "tools", "target": "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2",
		"content": "# WHAT: A tool created while a client listened."})
	if !newer.waitChanged(15 * time.Second) {
		t.Fatal("no list_changed on the per-request protocol's listen stream")
	}
	if _, ok := newer.tools(t)["NEW_TOOL"]; !ok {
		t.Fatal("NEW_TOOL not listed after list_changed")
	}
}

// server/discover (the per-request protocol) and initialize (a session) both
// declare the prompts capability, since prompts/list is answered (a
// directory offers no prompts, so the list is empty).
func TestMCPDiscoverListsPrompts(t *testing.T) {
	h := startHost(t, nil)
	for _, c := range []*mcpSession{connectMCPAt(t, h, "x-terminal-key", h.Key, ""), connectMCP(t, h, "x-terminal-key", h.Key)} {
		res := c.cs.InitializeResult()
		if res.Capabilities.Prompts == nil || res.Capabilities.Tools == nil || res.Capabilities.Resources == nil {
			caps, _ := json.Marshal(res.Capabilities)
			t.Fatalf("protocol %s: capabilities %s, want prompts, tools and resources", res.ProtocolVersion, caps)
		}
		list, err := c.cs.ListPrompts(context.Background(), nil)
		if err != nil || len(list.Prompts) != 0 {
			t.Fatalf("protocol %s: prompts/list %v, %v; want an empty list", res.ProtocolVersion, list, err)
		}
	}
}

// A row tool says what it does to the world: readOnlyHint on a read (an http
// GET, an fn row), destructiveHint true on a sensitive row that is not a
// read, false on the rest; its title is its description.
func TestMCPToolAnnotations(t *testing.T) {
	h := startHost(t, allowLoopback)
	up := newUpstream(t, openMeteo)
	createRow(t, h, temperatureRow(up.URL))
	createRow(t, h, map[string]any{"key": "POST_NOTE", "type": "http", "category": "tools", "target": "POST " + up.URL + "/notes",
		"content": "# WHAT: Post a note.\n{\"text\":\"$1\"}"})
	createRow(t, h, map[string]any{"key": "WIRE_MONEY", "type": "http", "category": "tools", "target": "POST " + up.URL + "/wire", "sensitive": 1,
		"input_schema": `{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`,
		"content":      "# WHAT: Wire money to an account.\n{\"to\":\"$1\"}"})
	owner := connectMCP(t, h, "x-terminal-key", h.Key)
	tools := owner.tools(t)
	type hints struct {
		title       string
		readOnly    bool
		destructive any
	}
	hintsOf := func(name string) hints {
		a := tools[name].Annotations
		if a == nil {
			t.Fatalf("%s has no annotations", name)
		}
		var d any
		if a.DestructiveHint != nil {
			d = *a.DestructiveHint
		}
		return hints{tools[name].Title, a.ReadOnlyHint, d}
	}
	for name, want := range map[string]hints{
		"ZZ_TEST_TEMPERATURE": {"Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API", true, nil},
		"POST_NOTE":           {"Post a note", false, false},
		"WIRE_MONEY":          {"Wire money to an account", false, true},
	} {
		if got := hintsOf(name); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}

// Every row the credential's scope covers has its contract document as a
// resource: listed in pages, read as GET /api/dispatch?key=K serves it, its
// key completed; a token sees nothing outside its scope.
func TestMCPContractResources(t *testing.T) {
	h := startHost(t, allowLoopback)
	mcpRows(t, h)
	ctx := context.Background()
	owner := connectMCP(t, h, "x-terminal-key", h.Key)

	tmpl, err := owner.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) < 2 || tmpl.ResourceTemplates[0].URITemplate != "rowcall://contract/{key}" ||
		!slices.ContainsFunc(tmpl.ResourceTemplates, func(r *sdk.ResourceTemplate) bool {
			return r.URITemplate == "rowcall://call/WEATHER_TYPED{?latitude,longitude}" // a listed row's call (suiteMCPOutput)
		}) {
		t.Fatalf("templates %+v %v", tmpl, err)
	}
	var uris []string
	for r, err := range owner.cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	want := []string{"rowcall://contract/ADMIN_ONLY", "rowcall://contract/BROKEN", "rowcall://contract/HIDDEN", "rowcall://contract/WEATHER_TYPED", "rowcall://contract/ZZ_TEST_TEMPERATURE"}
	if !slices.Equal(uris, want) {
		t.Fatalf("resources %v, want %v", uris, want)
	}

	read, err := owner.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "rowcall://contract/WEATHER_TYPED"})
	doc := h.do(t, req{Method: "GET", Path: "/api/dispatch?key=WEATHER_TYPED&format=markdown"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].MIMEType != "text/markdown" || read.Contents[0].Text != string(doc.Raw) {
		t.Fatalf("read %+v %v\nGET /api/dispatch?key=WEATHER_TYPED:\n%s", read, err, doc.Raw)
	}
	if read.TTLMs != 30000 || read.CacheScope != "private" {
		t.Fatalf("read cache hints %d %q", read.TTLMs, read.CacheScope)
	}

	// A token of category tools: its rows only; another row reads as absent.
	secret, _, _ := mint(t, h, map[string]any{"categories": []string{"tools"}})
	scoped := connectMCPAt(t, h, "Authorization", "Bearer "+secret, "2025-11-25")
	// Pages of one resource each (the endpoint's page_size), followed by cursor.
	paged := connectMCPTo(t, h.URL+"/mcp?page_size=1", "Authorization", "Bearer "+secret, "2025-11-25").cs
	uris = nil
	pages := 0
	cursor := ""
	for {
		res, err := paged.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if want := []string{"rowcall://contract/ADMIN_ONLY", "rowcall://contract/BROKEN", "rowcall://contract/HIDDEN", "rowcall://contract/ZZ_TEST_TEMPERATURE"}; !slices.Equal(uris, want) || pages < len(want) {
		t.Fatalf("token's resources %v in %d pages, want %v", uris, pages, want)
	}
	if _, err := scoped.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "rowcall://contract/WEATHER_TYPED"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("a token read a contract outside its scope: %v", err)
	}
	if r, err := scoped.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "rowcall://contract/BROKEN"}); err != nil || !strings.Contains(r.Contents[0].Text, "BROKEN") {
		t.Fatalf("a token's own row: %v", err)
	}

	// completion/complete: the keys the credential covers, from what was typed.
	complete := func(s *sdk.ClientSession, typed string) []string {
		res, err := s.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "rowcall://contract/{key}"},
			Argument: sdk.CompleteParamsArgument{Name: "key", Value: typed}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Completion.Values
	}
	if got := complete(owner.cs, "w"); !slices.Equal(got, []string{"WEATHER_TYPED"}) {
		t.Fatalf("owner completes w as %v", got)
	}
	if got := complete(scoped.cs, "w"); len(got) != 0 {
		t.Fatalf("a token completes w (out of its scope) as %v", got)
	}
	if got := complete(scoped.cs, "B"); !slices.Equal(got, []string{"BROKEN"}) {
		t.Fatalf("a token completes B as %v", got)
	}
}

// A client that sends a progressToken hears a flow's steps as
// notifications/progress: one after each, done of total, in order.
func TestMCPProgress(t *testing.T) {
	h := startHost(t, allowLoopback)
	up := newUpstream(t, openMeteo)
	createRow(t, h, temperatureRow(up.URL))
	createRow(t, h, map[string]any{"key": "THREE_READINGS", "type": "flow", "category": "weather",
		"content": "# WHAT: Three temperature readings in a row.\nZZ_TEST_TEMPERATURE: $1|$2 > ZZ_TEST_TEMPERATURE: $1|$2 > ZZ_TEST_TEMPERATURE: $1|$2"})
	heard := make(chan *sdk.ProgressNotificationParams, 16)
	cs := ownerSession(t, h, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { heard <- r.Params },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	params := &sdk.CallToolParams{Name: "call_capability", Arguments: map[string]any{"key": "THREE_READINGS", "args": "37.77|-122.42"}}
	params.SetProgressToken("readings-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", res, err)
	}
	for i := 1; i <= 3; i++ {
		select {
		case p := <-heard:
			if p.ProgressToken != "readings-1" || p.Progress != float64(i) || p.Total != 3 {
				t.Fatalf("progress %d: %+v", i, p)
			}
		case <-ctx.Done():
			t.Fatalf("heard %d of 3 progress notifications", i-1)
		}
	}
}

// The progress of a call comes on the call's own answer (an event stream:
// the notifications, then the result), so a client that has not opened the
// session's GET stream, or opens it late, hears every step.
func TestMCPProgressOnTheCallsStream(t *testing.T) {
	h := startHost(t, allowLoopback)
	up := newUpstream(t, openMeteo)
	createRow(t, h, temperatureRow(up.URL))
	createRow(t, h, map[string]any{"key": "THREE_READINGS", "type": "flow", "category": "weather",
		"content": "# WHAT: Three temperature readings in a row.\nZZ_TEST_TEMPERATURE: $1|$2 > ZZ_TEST_TEMPERATURE: $1|$2 > ZZ_TEST_TEMPERATURE: $1|$2"})
	id := mcpOpen(t, h) // no GET stream is ever opened
	r := mcpPost(t, h, id, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"call_capability",`+
		`"arguments":{"key":"THREE_READINGS","args":"37.77|-122.42"},"_meta":{"progressToken":"p-7"}}}`, nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("a call with a progressToken answered %d %s:\n%s", r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
	var events []map[string]any
	for _, line := range strings.Split(string(r.Raw), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			events = append(events, m)
		}
	}
	if len(events) != 4 {
		t.Fatalf("want 3 progress events and the result, got %d:\n%s", len(events), r.Raw)
	}
	for i, e := range events[:3] {
		p, _ := e["params"].(map[string]any)
		if e["method"] != "notifications/progress" || p["progressToken"] != "p-7" || p["progress"] != float64(i+1) || p["total"] != float64(3) {
			t.Fatalf("event %d: %v", i, e)
		}
	}
	if last := events[3]; last["id"] != float64(7) || last["result"] == nil {
		t.Fatalf("the last event is not the call's result: %v", last)
	}
	// A call that reports no progress is answered as plain JSON, progressToken or not.
	r = mcpPost(t, h, id, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"call_capability",`+
		`"arguments":{"key":"ZZ_TEST_TEMPERATURE","args":"37.77|-122.42"},"_meta":{"progressToken":8}}}`, nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(r.Raw), `"id":8`) {
		t.Fatalf("a call with no progress answered %d %s:\n%s", r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
}

// An fn row whose result is an image or audio (here a data: URL, which the
// echo module hands back) is image or audio content; the same text from an
// http row stays text. An fn row is a read (readOnlyHint).
func TestMCPMediaResults(t *testing.T) {
	h := startHost(t, allowLoopback)
	echo, _ := wasmexamples.ByName("echo")
	expect(t, putModule(t, h, "echo", echo.Wasm), 200, nil)
	createRow(t, h, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": echo.Content})
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")
	wav := []byte("RIFF\x24\x00\x00\x00WAVEfmt ")
	imageURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, imageURL) })
	createRow(t, h, map[string]any{"key": "IMAGE_LINK", "type": "http", "target": "GET " + up.URL + "/image", "content": "# WHAT: An image's data URL, as text."})

	owner := connectMCP(t, h, "x-terminal-key", h.Key)
	if a := owner.tools(t)["ECHO"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Fatalf("ECHO annotations %+v", a)
	}
	res := owner.call(t, "ECHO", map[string]any{"args": imageURL})
	if img, ok := res.Content[0].(*sdk.ImageContent); res.IsError || !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, png) {
		t.Fatalf("image result: %#v", res.Content[0])
	}
	res = owner.call(t, "ECHO", map[string]any{"args": "data:audio/wav;base64," + base64.StdEncoding.EncodeToString(wav)})
	if snd, ok := res.Content[0].(*sdk.AudioContent); res.IsError || !ok || snd.MIMEType != "audio/wav" || !bytes.Equal(snd.Data, wav) {
		t.Fatalf("audio result: %#v", res.Content[0])
	}
	res = owner.call(t, "IMAGE_LINK", nil)
	if tx, ok := res.Content[0].(*sdk.TextContent); !ok || !strings.Contains(tx.Text, imageURL) {
		t.Fatalf("an http row's data URL: %#v", res.Content[0])
	}
}

// A client subscribed to a contract hears notifications/resources/updated
// when the document changes; a token cannot subscribe outside its scope.
func TestMCPContractSubscribe(t *testing.T) {
	h := startHost(t, allowLoopback)
	mcpRows(t, h)
	updated := make(chan string, 16)
	cs := ownerSession(t, h, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if r := cs.InitializeResult().Capabilities.Resources; r == nil || !r.Subscribe || r.ListChanged {
		t.Fatalf("resources capability %+v", r)
	}
	const uri = "rowcall://contract/WEATHER_TYPED"
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/WEATHER_TYPED",
		Body: map[string]any{"content": "# WHAT: Weather forecast for a latitude and longitude, with typed arguments.\n# WHEN_TO_USE: deciding whether to cycle."}}), 200, nil)
	select {
	case got := <-updated:
		if got != uri {
			t.Fatalf("updated %q, want %q", got, uri)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/resources/updated after the contract changed")
	}
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil || !strings.Contains(read.Contents[0].Text, "deciding whether to cycle") {
		t.Fatalf("read after the change: %v", err)
	}

	secret, _, _ := mint(t, h, map[string]any{"categories": []string{"tools"}})
	scoped := connectMCP(t, h, "Authorization", "Bearer "+secret)
	if err := scoped.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err == nil {
		t.Fatal("a token subscribed to a contract outside its scope")
	}
}

// ownerSession opens a 2025-11-25 session as the owner, the client built
// with opts (its notification handlers).
func ownerSession(t *testing.T, h *host, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "rowcall-test-go", Version: "1.0.0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: h.URL + "/mcp",
		HTTPClient: &http.Client{Transport: headerTransport{"x-terminal-key", h.Key}}, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
