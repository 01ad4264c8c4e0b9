package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/runners/httpcall"
	"github.com/rowcall/rowcall/sqlstore"
)

// counted is the store, counting the rows it is asked for by key and the
// directory pages it is asked for.
type counted struct {
	*sqlstore.Store
	lookups, lists atomic.Int64
}

func (c *counted) List(ctx context.Context, f rowcall.Filter) (rowcall.Page, error) {
	c.lists.Add(1)
	return c.Store.List(ctx, f)
}

func (c *counted) Lookup(ctx context.Context, key string) (rowcall.Row, error) {
	c.lookups.Add(1)
	return c.Store.Lookup(ctx, key)
}

// newHandler serves a handler over a fresh SQLite file with one http row;
// the owner's credential is x-terminal-key: owner.
func newHandler(t *testing.T, cfg Config) (*httptest.Server, *counted) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"temperature_2m":15.7,"q":"`+r.URL.RawQuery+`"}`)
	}))
	t.Cleanup(up.Close)
	disp := testenv.Dispatcher(t, map[rowcall.Type]rowcall.Runner{rowcall.TypeHTTP: httpcall.New(httpcall.Config{Client: up.Client()})})
	store := &counted{Store: disp.Store.(*sqlstore.Store)}
	disp.Store = store
	row := rowcall.NewRow("TEMP", rowcall.TypeHTTP)
	row.Target = "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2"
	row.Content = "# WHAT: Current temperature\n# ARGS: $1=latitude | $2=longitude"
	if _, err := store.Create(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Dispatcher = store, disp
	if cfg.Caller == nil {
		cfg.Caller = func(r *http.Request) (Caller, bool) {
			return Caller{Owner: true, Actor: "owner:terminal-key"}, r.Header.Get("X-Terminal-Key") == "owner"
		}
	}
	cfg.ReceiptBase = func(r *http.Request) string { return "http://" + r.Host + "/receipt/" }
	cfg.Unauthorized = func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
	}
	cfg.Fail = func(w http.ResponseWriter, r *http.Request, err error) { // as the API's: a refusal's status, else 403
		status := http.StatusForbidden
		if e, ok := err.(*rowcall.Error); ok && e.Status != 0 {
			status = e.Status
		}
		http.Error(w, err.Error(), status)
	}
	h := New(cfg)
	t.Cleanup(h.Close)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, store
}

type ownerKey struct{}

func (ownerKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Terminal-Key", "owner")
	return http.DefaultTransport.RoundTrip(r)
}

// The worker's mode: no sessions, a fresh server per request, no
// list_changed — and still list and call, with the receipt stored before the
// answer.
func TestStateless(t *testing.T) {
	srv, store := newHandler(t, Config{Stateless: true})
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL,
		HTTPClient: &http.Client{Transport: ownerKey{}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if c := cs.InitializeResult().Capabilities.Tools; c == nil || c.ListChanged {
		t.Fatalf("tools capability %+v", c)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != 3 || list.Tools[0].Name != "TEMP" { // the SDK sorts by name
		t.Fatalf("tools %v %v", list, err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "TEMP", Arguments: map[string]any{"args": "1|2"}})
	if err != nil || res.IsError {
		t.Fatalf("call %v %v", res, err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "latitude=1&longitude=2") {
		t.Fatalf("result %s", text)
	}
	if res.StructuredContent != nil {
		t.Fatalf("a row without structured output answered structuredContent %v", res.StructuredContent)
	}
	id := res.Meta[CallMeta].(map[string]any)["invocation_id"].(string)
	if rc, err := store.Receipt(ctx, id); err != nil || rc.Actor != "owner:terminal-key" || !rc.OK {
		t.Fatalf("receipt %+v %v", rc, err)
	}
}

// connect opens a Go SDK client session on srv as the owner.
// sessions connects with the protocol of sessions (2025-11-25): the Go SDK
// client otherwise speaks the newer per-request protocol where a server
// offers it.
var sessions = &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

func connect(t *testing.T, srv *httptest.Server) *sdk.ClientSession {
	t.Helper()
	return connectAs(t, srv, sessions)
}

// connectAs connects with opts (nil: the client's newest protocol).
func connectAs(t *testing.T, srv *httptest.Server, opts *sdk.ClientSessionOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL,
		HTTPClient: &http.Client{Transport: ownerKey{}}, DisableStandaloneSSE: true, MaxRetries: -1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A tools/call reads its row from the dispatcher's row cache: while the
// directory does not change, calls read no row from the store (as POST
// /api/dispatch does not), and an edit is seen by the next call.
func TestCallReadsTheRowCache(t *testing.T) {
	srv, store := newHandler(t, Config{})
	cs := connect(t, srv)
	ctx := context.Background()
	call := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("call %v %v", res, err)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	call("TEMP", map[string]any{"args": "1|2"}) // the first call fills the cache
	before := store.lookups.Load()
	for range 3 {
		call("TEMP", map[string]any{"args": "1|2"})
		call(CallTool, map[string]any{"key": "TEMP", "args": "1|2"})
	}
	if n := store.lookups.Load() - before; n != 0 {
		t.Fatalf("6 calls of a cached row read %d rows from the store", n)
	}
	row, err := store.Get(ctx, "TEMP")
	if err != nil {
		t.Fatal(err)
	}
	row.Target = strings.Replace(row.Target, "latitude=$1", "lat=$1", 1)
	if _, err := store.Replace(ctx, row, row.Version); err != nil {
		t.Fatal(err)
	}
	if got := call("TEMP", map[string]any{"args": "1|2"}); !strings.Contains(got, "lat=1&longitude=2") {
		t.Fatalf("after an edit: %s", got)
	}
}

// tools/list is paginated with the specification's cursor: ?page_size=N on
// the endpoint (or Config.PageSize) sets the page, nextCursor leads to the
// next, and the pages together are the whole list; without either, one
// answer holds every tool.
func TestToolsListPages(t *testing.T) {
	srv, store := newHandler(t, Config{})
	ctx := context.Background()
	for _, k := range []string{"ALPHA", "BETA", "GAMMA"} {
		row := rowcall.NewRow(k, rowcall.TypeHTTP)
		row.Target = "GET http://127.0.0.1:9/" + k
		if _, err := store.Create(ctx, row); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := connect(t, srv).ListTools(ctx, nil)
	if err != nil || len(whole.Tools) != 6 || whole.NextCursor != "" {
		t.Fatalf("unpaged: %v %v", whole, err)
	}
	paged := connect(t, &httptest.Server{URL: srv.URL + "?page_size=4"})
	first, err := paged.ListTools(ctx, nil)
	if err != nil || len(first.Tools) != 4 || first.NextCursor == "" {
		t.Fatalf("first page: %v %v", first, err)
	}
	second, err := paged.ListTools(ctx, &sdk.ListToolsParams{Cursor: first.NextCursor})
	if err != nil || len(second.Tools) != 2 || second.NextCursor != "" {
		t.Fatalf("second page: %v %v", second, err)
	}
	var got, want []string
	for _, tl := range append(first.Tools, second.Tools...) {
		got = append(got, tl.Name)
	}
	for _, tl := range whole.Tools {
		want = append(want, tl.Name)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("pages %v, whole list %v", got, want)
	}
	for _, bad := range []string{"0", "x", "1001"} {
		res, err := (&http.Client{Transport: ownerKey{}}).Post(srv.URL+"?page_size="+bad, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == 200 || !strings.Contains(string(body), "page_size must be a whole number from 1 to 1000") {
			t.Errorf("page_size=%s: %d %s", bad, res.StatusCode, body)
		}
	}
}

// A request without a usable credential is answered by Config.Unauthorized
// (the API's literal 401, WWW-Authenticate included, is tested in test/).
func TestUnauthorized(t *testing.T) {
	srv, _ := newHandler(t, Config{})
	res, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 401 || strings.TrimSpace(string(body)) != `{"error":"unauthorized"}` {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
}

func TestRowTool(t *testing.T) {
	row := rowcall.NewRow("GEO", rowcall.TypeHTTP)
	row.Content = "# WHAT: Finds a place\n# WHEN_TO_USE: you have an address.\n# ARGS: $1=address\n# EX: [GEO]10 Downing St[/GEO]"
	p := rowTool(&row)
	schema, _ := json.Marshal(p.tool.InputSchema)
	if p.tool.Description != "Finds a place. When to use: you have an address." ||
		string(schema) != `{"type":"object","properties":{"args":{"type":"string","description":"The arguments as one string, separated by '|': $1=address. Example: 10 Downing St"}},"additionalProperties":false}` {
		t.Fatalf("%q %s", p.tool.Description, schema)
	}
	// A schema without "type" is an object schema; its property order is kept.
	row.InputSchema = `{"properties": {"z": {"type": "string"}, "a": {"type": "integer"}}, "required": ["z"]}`
	p = rowTool(&row)
	if schema, _ = json.Marshal(p.tool.InputSchema); string(schema) != `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"}},"required":["z"]}` {
		t.Fatalf("schema %s", schema)
	}
	if b, err := body(&row, json.RawMessage(`{"a":3,"z":"x|y"}`)); err == nil || !strings.Contains(err.Error(), `"z" contains '|'`) {
		t.Fatalf("pipe in a non-last argument: %q %v", b, err)
	}
	if b, err := body(&row, json.RawMessage(`{"a":3,"z":"x"}`)); err != nil || b != "x|3" {
		t.Fatalf("named: %q %v", b, err)
	}
	if b, err := body(&row, json.RawMessage(`{"args":"x|3"}`)); err != nil || b != "x|3" {
		t.Fatalf("positional on a typed row: %q %v", b, err)
	}
	// Schemas that cannot be tool input schemas fall back to args.
	for _, s := range []string{`{"type":"array"}`, `{"type":"object"}`, `not json`} {
		row.InputSchema = s
		if _, _, ok := schemaOf(&row); ok {
			t.Errorf("%s used as an input schema", s)
		}
	}
	row.InputSchema = ""
	if _, err := body(&row, json.RawMessage(`{"address":"x"}`)); err == nil {
		t.Fatal("a named argument on an untyped row was accepted")
	}
	if b, err := body(&row, json.RawMessage(`{"args":12}`)); err != nil || b != "12" {
		t.Fatalf("numeric args: %q %v", b, err)
	}
	// A row without a # WHAT line is described by its first # line, as the
	// seed's NOW is (Row.Description, what ask and contract documents show).
	row = rowcall.NewRow("NOW", rowcall.TypeFn)
	row.Category = "time"
	row.Content = "# Return the current time in Pacific time.\n# WHEN_TO_USE: any object that needs the time.\n# EX: [NOW][/NOW]"
	if d := rowTool(&row).tool.Description; d != "Return the current time in Pacific time. When to use: any object that needs the time." {
		t.Fatalf("a row without # WHAT: %q", d)
	}
	if got := clip(strings.Repeat("é", 10), 9); got != "ééé…" {
		t.Fatalf("clip %q", got)
	}
}

// The meta-tools' definitions stay short: a client sends them to its model
// every turn (they were 1,571 bytes of JSON; now at most 1 KB).
func TestMetaToolsShort(t *testing.T) {
	n := 0
	for _, tl := range []*sdk.Tool{searchTool, callTool} {
		b, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		n += len(b)
	}
	if n > 1024 {
		t.Fatalf("the two meta-tools are %d bytes of JSON", n)
	}
}

// A call's fields (_meta's CallMeta) are written as they were when they were a map (the
// same keys, values and order, so the same bytes on the wire).
func TestCalledEncodesAsTheMap(t *testing.T) {
	c := called{OK: true, Ran: true, Key: "TEMP", Trace: "t_1", InvocationID: "inv_1",
		PublicReceipt: "http://h/receipt/inv_1", Contract: "abc"}
	m := map[string]any{"ok": c.OK, "ran": c.Ran, "key": c.Key, "trace": c.Trace,
		"invocation_id": c.InvocationID, "public_receipt": c.PublicReceipt, "contract_sha256": c.Contract}
	got, _ := json.Marshal(&c)
	want, _ := json.Marshal(m)
	if string(got) != string(want) {
		t.Fatalf("struct %s\nmap    %s", got, want)
	}
}
