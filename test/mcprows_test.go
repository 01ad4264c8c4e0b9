package test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall/internal/testenv"
)

// mcpServersFile writes the operator's ROWCALL_MCP_SERVERS file declaring
// the pinned npm server-everything as the stdio server "everything".
func mcpServersFile(t *testing.T) string {
	t.Helper()
	node, everything := everythingJS(t)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}, "env": []string{}},
	}})
	file := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// mcpServersDir is test/mcpservers, the reference MCP servers pinned from
// npm, installed when missing.
func mcpServersDir(t *testing.T) string {
	return testenv.NPM(t, "mcpservers", filepath.Join("node_modules", "@modelcontextprotocol", "server-memory", "package.json"))
}

// everythingJS is node and the pinned npm server-everything's script.
func everythingJS(t *testing.T) (node, script string) {
	t.Helper()
	dir := mcpServersDir(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH (make test installs nodejs)")
	}
	return node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// `rowcall import mcp stdio:NAME` makes one row per tool of a server the
// operator declared, dry run first; a re-import changes nothing; an imported
// tool is callable with typed arguments, and its annotations decide
// sensitive.
func TestImportMCPCommand(t *testing.T) {
	h := startHost(t, nil, "ROWCALL_MCP_SERVERS="+mcpServersFile(t))
	run := func(args ...string) string {
		t.Helper()
		cmd := append([]string{"import", "mcp", "stdio:everything", "--prefix", "EV_", "--category", "everything"}, args...)
		out, err := exec.Command(binary, append(cmd, "--url", h.URL, "--data", h.Data)...).CombinedOutput()
		if err != nil {
			t.Fatalf("rowcall %s: %v\n%s", strings.Join(cmd, " "), err, out)
		}
		return string(out)
	}
	// A dry run names the rows it would make, and makes none.
	if out := run("--dry-run"); !strings.Contains(out, "would create 13, would update 0, unchanged 0\n") || !strings.Contains(out, "\n  create EV_GET_SUM\n") {
		t.Fatalf("dry run: %s", out)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/EV_GET_SUM"}), 404, nil)
	if out := run(); !strings.Contains(out, "created 13, updated 0, unchanged 0") {
		t.Fatalf("import: %s", out)
	}
	if out := run(); !strings.Contains(out, "created 0, updated 0, unchanged 13") {
		t.Fatalf("second import: %s", out)
	}
	// rowcall declares no roots (a call has no workspace), so the server
	// offers no get-roots-list, which asked for them and waited 30 s.
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/EV_GET_ROOTS_LIST"}), 404, nil)
	got := h.do(t, req{Method: "POST", Path: "/api/dispatch/EV_GET_SUM", Body: map[string]any{"a": 2, "b": 3}})
	expect(t, got, 200, map[string]any{"ok": true, "result": "The sum of 2 and 3 is 5."})
	row := h.do(t, req{Method: "GET", Path: "/api/directory/EV_GET_STRUCTURED_CONTENT"}).JSON
	if row["type"] != "http" || row["runner"] != "mcp" || row["target"] != "MCP stdio:everything#get-structured-content" || row["sensitive"] != float64(0) {
		t.Fatalf("imported row: %v", row)
	}
	if !strings.Contains(row["content"].(string), "# WHAT: Returns structured content along with an output schema for client data validation\n") {
		t.Fatalf("docstring: %s", row["content"])
	}
	// A tool the server does not mark read-only is sensitive.
	if r := h.do(t, req{Method: "GET", Path: "/api/directory/EV_TOGGLE_SIMULATED_LOGGING"}).JSON; r["sensitive"] != float64(1) {
		t.Fatalf("toggle tool: sensitive %v", r["sensitive"])
	}
	if row["imported_from"] != "mcp:stdio:everything" {
		t.Fatalf("imported_from: %v", row["imported_from"])
	}
	// The tool's outputSchema is the row's output_schema: /mcp lists it, and
	// a call answers the tool's structuredContent, checked against it.
	if s, _ := row["output_schema"].(string); !strings.Contains(s, `"temperature"`) {
		t.Fatalf("output_schema of a tool with an outputSchema: %q", s)
	}
	s := connectMCP(t, h, "x-terminal-key", h.Key)
	if tool := s.tools(t)["EV_GET_STRUCTURED_CONTENT"]; tool == nil || tool.OutputSchema == nil {
		t.Fatalf("EV_GET_STRUCTURED_CONTENT listed without its outputSchema: %+v", tool)
	}
	res := s.call(t, "EV_GET_STRUCTURED_CONTENT", map[string]any{"location": "New York"})
	if sc := structured(t, res.StructuredContent); res.IsError || sc["temperature"] == nil {
		t.Fatalf("structured call: isError %v %v %q", res.IsError, res.StructuredContent, texts(res))
	}
	// An import never replaces a row it did not make: a row written by hand
	// under a tool's key stops the whole import, nothing written, until
	// --replace says so.
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "MINE_ECHO", "type": "fn", "target": "echo",
		"content": "# WHAT: My own echo."}}), 201, nil)
	cmd := []string{"import", "mcp", "stdio:everything", "--prefix", "MINE_", "--url", h.URL, "--data", h.Data}
	out, err := exec.Command(binary, cmd...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "import_not_owner") {
		t.Fatalf("an import over a hand-made row: %v\n%s", err, out)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/MINE_GET_SUM"}), 404, nil)
	if r := h.do(t, req{Method: "GET", Path: "/api/directory/MINE_ECHO"}).JSON; r["type"] != "fn" {
		t.Fatalf("the hand-made row changed: %v", r)
	}
	if out, err := exec.Command(binary, append(cmd, "--replace")...).CombinedOutput(); err != nil || !strings.Contains(string(out), "updated 1") {
		t.Fatalf("--replace: %v\n%s", err, out)
	}
	if r := h.do(t, req{Method: "GET", Path: "/api/directory/MINE_ECHO"}).JSON; r["runner"] != "mcp" || r["imported_from"] != "mcp:stdio:everything" {
		t.Fatalf("after --replace: %v", r)
	}
}

// changingServer is a Go SDK MCP server on loopback whose tool "lookup" can
// be redefined (set), and whose tools can be removed and added. One that
// tells sends notifications/tools/list_changed on each change (on a
// session's stream, or the stateless protocol's subscriptions/listen); a
// silent one tells nobody: each change is served by a new server, and the
// old sessions are forgotten (404, as a restarted server answers).
type changingServer struct {
	URL     string
	silent  bool
	mu      sync.Mutex
	changes []func(*sdk.Server)
	srv     *sdk.Server
	handler atomic.Pointer[http.Handler]
}

const (
	lookupSchema  = `{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`
	changedSchema = `{"type":"object","properties":{"word":{"type":"string"},"force":{"type":"boolean"}},"required":["word"]}`
)

// newMCPUpstream serves an MCP server's handler on loopback until the test
// ends, and then ends its open requests: a host keeps a pooled session's
// own stream (GET) open to hear list_changed, and httptest's Close alone
// waits for every open request: it kept each such test 30 s longer.
func newMCPUpstream(t testing.TB, h http.Handler) *httptest.Server {
	up := httptest.NewServer(h)
	t.Cleanup(func() {
		up.Listener.Close() // no new connection between the next two
		up.CloseClientConnections()
		up.Close()
	})
	return up
}

func newChangingServer(t *testing.T, silent bool) *changingServer {
	c := &changingServer{silent: silent}
	c.set("Looks a word up.", lookupSchema)
	c.add("old")
	up := newMCPUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*c.handler.Load()).ServeHTTP(w, r) }))
	c.URL = up.URL + "/mcp"
	return c
}

// change applies f: to the running server, or (silent) to a new one.
func (c *changingServer) change(f func(*sdk.Server)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changes = append(c.changes, f)
	if c.srv != nil && !c.silent {
		f(c.srv)
		return
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "changing", Version: "1"}, nil)
	for _, f := range c.changes {
		f(srv)
	}
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	c.srv = srv
	c.handler.Store(&h)
}

func (c *changingServer) set(description, schema string) {
	c.change(func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "lookup", Description: description, InputSchema: json.RawMessage(schema),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "found " + string(req.Params.Arguments)}}}, nil
			})
	})
}

func (c *changingServer) add(name string) {
	c.change(func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: name, Description: "The " + name + " tool.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
	})
}

func (c *changingServer) remove(name string) { c.change(func(s *sdk.Server) { s.RemoveTools(name) }) }

// Drift: a tool whose definition changes upstream is never applied
// silently. `rowcall mcp sync` marks its row drifted, which stops a token
// pinned to the row with contract_changed; --accept defines the row again
// from the tool; a removed tool disables its row; a new one is listed.
func TestMCPSyncCatchesDrift(t *testing.T) {
	up := newChangingServer(t, true) // silent: the host hears of no change by itself
	h := startHost(t, allowLoopback)
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(binary, append(args, "--url", h.URL, "--data", h.Data)...).CombinedOutput()
		if err != nil {
			t.Fatalf("rowcall %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := cli("import", "mcp", up.URL, "--prefix", "UP_"); !strings.Contains(out, "created 2, updated 0, unchanged 0") {
		t.Fatalf("import: %s", out)
	}
	tok, _, scope := mint(t, h, map[string]any{"keys": []string{"UP_LOOKUP"}, "pin": []string{"UP_LOOKUP"}})
	pinned := scope["pins"].(map[string]any)["UP_LOOKUP"].(string)
	expect(t, tokenCall(t, h, tok, "UP_LOOKUP", "cat"), 200, map[string]any{"ok": true, "result": `found {"word":"cat"}`})
	if out := cli("mcp", "sync"); out != up.URL+": 2 unchanged\n" {
		t.Fatalf("sync of an unchanged server: %q", out)
	}

	// Upstream changes the tool's description and arguments.
	up.set("Looks a word up and deletes it.", changedSchema)
	if out := cli("mcp", "sync", "--dry-run"); !strings.Contains(out, "drifted   lookup UP_LOOKUP") {
		t.Fatalf("dry-run sync: %s", out)
	}
	expect(t, tokenCall(t, h, tok, "UP_LOOKUP", "cat"), 200, map[string]any{"ok": true}) // a dry run changes nothing
	out := cli("mcp", "sync")
	if !strings.Contains(out, "drifted   lookup UP_LOOKUP") ||
		(!strings.Contains(out, ": 1 drifted, 1 unchanged\n") && !strings.Contains(out, ": 1 unchanged, 1 drifted\n")) {
		t.Fatalf("sync: %s", out)
	}
	heldDrifted(t, h, "UP_LOOKUP", "cat", tok, pinned)
	row := h.do(t, req{Method: "GET", Path: "/api/directory/UP_LOOKUP"}).JSON
	if !strings.Contains(row["content"].(string), "# DRIFTED: ") || strings.Contains(row["input_schema"].(string), "force") {
		t.Fatalf("drifted row: %v", row)
	}

	// The owner accepts: the row takes the new definition, unmarked.
	if out := cli("mcp", "sync", "--accept", "UP_LOOKUP"); !strings.Contains(out, "accepted  lookup UP_LOOKUP") {
		t.Fatalf("accept: %s", out)
	}
	row = h.do(t, req{Method: "GET", Path: "/api/directory/UP_LOOKUP"}).JSON
	if strings.Contains(row["content"].(string), "# DRIFTED: ") || !strings.Contains(row["input_schema"].(string), "force") ||
		!strings.Contains(row["content"].(string), "deletes it") || row["target"] != "MCP "+up.URL+"#lookup" {
		t.Fatalf("accepted row: %v", row)
	}

	// A removed tool disables its row; a tool no row calls is listed as new.
	up.remove("old")
	up.add("fresh")
	out = cli("mcp", "sync", up.URL)
	if !strings.Contains(out, "removed   old UP_OLD") || !strings.Contains(out, "new       fresh") {
		t.Fatalf("sync after removal: %s", out)
	}
	if r := h.do(t, req{Method: "GET", Path: "/api/directory/UP_OLD"}).JSON; r["enabled"] != float64(0) {
		t.Fatalf("the removed tool's row: enabled %v", r["enabled"])
	}
}

// importChanging imports up's tools as UP_ rows on h, and mints a token
// pinned to UP_LOOKUP, which it calls once; it returns the token and the
// pinned contract.
func importChanging(t *testing.T, h *host, up *changingServer) (tok, pinned string) {
	t.Helper()
	out, err := exec.Command(binary, "import", "mcp", up.URL, "--prefix", "UP_", "--url", h.URL, "--data", h.Data).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "created 2, updated 0, unchanged 0") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	tok, _, scope := mint(t, h, map[string]any{"keys": []string{"UP_LOOKUP"}, "pin": []string{"UP_LOOKUP"}})
	expect(t, tokenCall(t, h, tok, "UP_LOOKUP", "cat"), 200, map[string]any{"ok": true, "result": `found {"word":"cat"}`})
	return tok, scope["pins"].(map[string]any)["UP_LOOKUP"].(string)
}

// rowUntil polls GET /api/directory/KEY until cond holds for the row.
func rowUntil(t *testing.T, h *host, key, what string, cond func(row map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		row := h.do(t, req{Method: "GET", Path: "/api/directory/" + key}).JSON
		if cond(row) {
			return row
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, row)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// heldDrifted checks that drifted row key is held: the owner's call with
// body is refused with definition_changed, and the token pinned to the row's
// contract (pinned) stops with contract_changed, the row's contract now
// being another.
func heldDrifted(t *testing.T, h *host, key, body, tok, pinned string) {
	t.Helper()
	refused(t, h, dispatchCall(t, h, key, body), 409, "definition_changed")
	got := tokenCall(t, h, tok, key, body)
	e, _ := got.JSON["error"].(string)
	current, ok := strings.CutPrefix(e, "contract_changed:"+pinned+"!=")
	if !ok || len(current) != 64 {
		t.Fatalf("the pinned token's call of the drifted row: %d %s", got.Status, got.Raw)
	}
	refused(t, h, got, 409, e)
}

func drifted(row map[string]any) bool {
	c, _ := row["content"].(string)
	return strings.Contains(c, "# DRIFTED: ")
}

// The host checks by itself: an upstream that sends
// notifications/tools/list_changed after changing a tool has its row marked
// drifted without anyone running sync (the periodic check is 15 minutes
// away), which stops the pinned token with contract_changed. The owner
// rejects the change: the row keeps its approved definition and calls are
// refused with definition_rejected while the upstream lists the changed
// one; once it lists the approved one again, calls go through.
func TestMCPDriftCheckedOnListChanged(t *testing.T) {
	up := newChangingServer(t, false)
	h := startHost(t, allowLoopback)
	tok, pinned := importChanging(t, h, up)

	up.set("Looks a word up and deletes it.", changedSchema) // the SDK server sends list_changed
	rowUntil(t, h, "UP_LOOKUP", "the host to mark UP_LOOKUP drifted", drifted)
	heldDrifted(t, h, "UP_LOOKUP", "cat", tok, pinned)

	// Reject: the approved definition stays, so the pinned contract holds
	// again, but the call is refused before it reaches the changed tool.
	expect(t, h.do(t, req{Method: "POST", Path: "/api/mcp/sync?reject=UP_LOOKUP", Body: map[string]any{}}), 200, map[string]any{"ok": true})
	row := h.do(t, req{Method: "GET", Path: "/api/directory/UP_LOOKUP"}).JSON
	if drifted(row) || !strings.Contains(row["content"].(string), "# REJECTED: sha256:") || strings.Contains(row["input_schema"].(string), "force") || row["enabled"] != float64(1) {
		t.Fatalf("rejected row: %v", row)
	}
	got := tokenCall(t, h, tok, "UP_LOOKUP", "cat")
	if res, _ := got.JSON["result"].(string); !strings.HasPrefix(res, "ERR:mcp:definition_rejected:sha256:") {
		t.Fatalf("a call against the rejected definition: %d %s", got.Status, got.Raw)
	}

	// The upstream lists the approved definition again: calls go through,
	// and its list_changed lets the host clear the mark.
	up.set("Looks a word up.", lookupSchema)
	expect(t, tokenCall(t, h, tok, "UP_LOOKUP", "cat"), 200, map[string]any{"ok": true, "result": `found {"word":"cat"}`})
	rowUntil(t, h, "UP_LOOKUP", "the host to clear the rejection", func(row map[string]any) bool {
		return !strings.Contains(row["content"].(string), "# REJECTED:")
	})
}

// The periodic check (--mcp-sync-every) catches a change an upstream tells
// nobody about (no list_changed), and a tool that is gone disables its row.
func TestMCPDriftCheckedPeriodically(t *testing.T) {
	up := newChangingServer(t, true)
	h := startHost(t, append([]string{"--mcp-sync-every", "200ms"}, allowLoopback...))
	tok, pinned := importChanging(t, h, up)

	up.set("Looks a word up and deletes it.", changedSchema)
	up.remove("old")
	rowUntil(t, h, "UP_LOOKUP", "the periodic check to mark UP_LOOKUP drifted", drifted)
	heldDrifted(t, h, "UP_LOOKUP", "cat", tok, pinned)
	rowUntil(t, h, "UP_OLD", "the removed tool's row to be disabled", func(row map[string]any) bool { return row["enabled"] == float64(0) })
}

// ROWCALL_MCP_DRIFT=warn: a drifted row stays callable, marked, by the
// owner and by an unpinned token; a token pinned to it still stops with
// contract_changed.
func TestMCPDriftWarnOnly(t *testing.T) {
	up := newChangingServer(t, true)
	h := startHost(t, allowLoopback, "ROWCALL_MCP_DRIFT=warn")
	tok, pinned := importChanging(t, h, up)
	free, _, _ := mint(t, h, map[string]any{"keys": []string{"UP_LOOKUP"}})

	up.set("Looks a word up and deletes it.", changedSchema)
	expect(t, h.do(t, req{Method: "POST", Path: "/api/mcp/sync", Body: map[string]any{}}), 200, map[string]any{"ok": true})
	if row := h.do(t, req{Method: "GET", Path: "/api/directory/UP_LOOKUP"}).JSON; !drifted(row) || !strings.Contains(row["content"].(string), "# WHAT: (drifted: ") {
		t.Fatalf("the changed tool's row is not marked drifted: %v", row)
	}
	expect(t, dispatchCall(t, h, "UP_LOOKUP", "dog"), 200, map[string]any{"ok": true, "result": `found {"word":"dog"}`})
	expect(t, tokenCall(t, h, free, "UP_LOOKUP", "cat"), 200, map[string]any{"ok": true, "result": `found {"word":"cat"}`})
	if e, _ := tokenCall(t, h, tok, "UP_LOOKUP", "cat").JSON["error"].(string); !strings.HasPrefix(e, "contract_changed:"+pinned+"!=") {
		t.Fatalf("the pinned token's call: %q", e)
	}
}

// A background check that cannot list a server's tools is not silent: once
// every row of the server names a per-caller connection (and the owner has
// none, the host no providers), the host's metrics show the server failing
// and the rows' mcp_sync says why.
func TestMCPSyncFailureIsVisible(t *testing.T) {
	up := newChangingServer(t, true)
	h := startHost(t, append([]string{"--mcp-sync-every", "200ms"}, allowLoopback...))
	importChanging(t, h, up)
	for _, k := range []string{"UP_LOOKUP", "UP_OLD"} {
		expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/" + k, Body: map[string]any{"auth": "bearer:connection:idp"}}), 200, map[string]any{"ok": true})
	}
	server := map[string]string{"server": up.URL}
	deadline := time.Now().Add(30 * time.Second)
	for {
		fams := scrape(t, h.URL+"/metrics", map[string]string{"X-Terminal-Key": h.Key})
		if sample(fams, "rowcall_mcp_sync_failing", server) == 1 && sample(fams, "rowcall_mcp_sync_failures_total", server) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the metrics to show the failing sync")
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, _ := h.do(t, req{Method: "GET", Path: "/api/directory/UP_LOOKUP"}).JSON["mcp_sync"].(map[string]any)
	if e, _ := st["error"].(string); !strings.Contains(e, "per-caller connection") || !strings.Contains(e, "connections_off:idp") {
		t.Fatalf("the row's mcp_sync: %v", st)
	}
}
