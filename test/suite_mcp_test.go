package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// suiteMCP: an http row with runner mcp calls a tool of an MCP server on
// loopback, with its pipe arguments named by input_schema (on the worker
// through its fetch-based transport, a session per call); a stdio row on a
// host without the operator's servers file — and always on the worker,
// which cannot start processes — fails with the stable
// ERR:mcp:stdio_unavailable.
func suiteMCP(t *testing.T, tg *target) {
	h := tg.host
	up := newChangingServer(t, false)
	createRow(t, h, map[string]any{"key": "S_MCP_LOOKUP", "type": "http", "runner": "mcp", "target": "MCP " + up.URL + "#lookup",
		"input_schema": `{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`})
	for _, w := range []string{"cat", "dog"} { // a second call: a pooled session, or (the worker) a new one
		expect(t, dispatchCall(t, h, "S_MCP_LOOKUP", w), 200, map[string]any{"ok": true, "ran": true, "result": `found {"word":"` + w + `"}`})
	}
	createRow(t, h, map[string]any{"key": "S_MCP_STDIO", "type": "http", "runner": "mcp", "target": "MCP stdio:github#create_issue"})
	got := dispatchCall(t, h, "S_MCP_STDIO", "")
	if r, _ := got.JSON["result"].(string); got.JSON["ok"] != false || !strings.HasPrefix(r, "ERR:mcp:stdio_unavailable:github") {
		t.Fatalf("a stdio row without servers: %s", got.Raw)
	}
}

// suiteMCPImport: POST /api/import/mcp on every host, the worker included
// (which lists the tools through its fetch-based transport, with the
// credential from the request's env): owner only; a dry run writes nothing;
// the import makes one row per tool of a Go SDK server on loopback that
// wants a bearer credential (key in the key convention, target naming the
// server and tool, the import's auth, sensitive unless read-only, the
// credential redacted from the server's text); a re-import changes nothing;
// a row the import did not make is not replaced; sync finds nothing
// changed; an imported tool is called and its receipt confirms. A stdio
// server cannot be listed where none is declared (the worker never can),
// and says so with ERR:mcp:stdio_unavailable; suiteMCP checks the same for
// a call.
func suiteMCPImport(t *testing.T, tg *target) {
	h := tg.host
	up := newBearerMCPServer(t)
	q := url.Values{"server": {up}, "prefix": {"S_MI_"}, "category": {"s-mcp-import"}, "auth": {"bearer:SUITE_API_KEY"}}
	path := "/api/import/mcp?" + q.Encode()
	tok, _, _ := mint(t, h, map[string]any{"keys": []string{"S_MI_SHOUT"}})
	expect(t, asToken(t, h, tok, req{Method: "POST", Path: path, Body: map[string]any{}}), 403, map[string]any{"error": "forbidden"})
	expect(t, h.do(t, req{Method: "POST", Path: path, Body: map[string]any{}, NoAuth: true}), 401, map[string]any{"error": "unauthorized"})

	got := h.do(t, req{Method: "POST", Path: path + "&dry_run=1", Body: map[string]any{}})
	expect(t, got, 200, map[string]any{"ok": true, "dry_run": true, "state_changed": false, "source": "mcp:" + up, "skipped": []string{}})
	if created := fmt.Sprint(got.JSON["created"]); created != "[S_MI_FORGET S_MI_SHOUT]" {
		t.Fatalf("dry run created %s: %s", created, got.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_MI_SHOUT"}), 404, nil)
	got = h.do(t, req{Method: "POST", Path: path, Body: map[string]any{}})
	expect(t, got, 200, map[string]any{"ok": true, "dry_run": false, "state_changed": true})
	if created := fmt.Sprint(got.JSON["created"]); created != "[S_MI_FORGET S_MI_SHOUT]" {
		t.Fatalf("import created %s: %s", created, got.Raw)
	}
	row := h.do(t, req{Method: "GET", Path: "/api/directory/S_MI_SHOUT"})
	expect(t, row, 200, map[string]any{"type": "http", "runner": "mcp", "target": "MCP " + up + "#shout", "auth": "bearer:SUITE_API_KEY",
		"category": "s-mcp-import", "sensitive": 0, "imported_from": "mcp:" + up})
	content := row.JSON["content"].(string)
	if !strings.Contains(content, "# WHAT: Repeats a word in capitals.\n# WHEN_TO_USE: Deployed with key ") || !strings.Contains(content, "# EX: [S_MI_SHOUT]x|2[/S_MI_SHOUT]") ||
		strings.Contains(string(row.Raw), suiteSecret) {
		t.Fatalf("imported row: %s", row.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_MI_FORGET"}), 200, map[string]any{"sensitive": 1, "runner": "mcp"})
	expect(t, h.do(t, req{Method: "POST", Path: path, Body: map[string]any{}}), 200,
		map[string]any{"ok": true, "state_changed": false, "created": []string{}, "unchanged": 2})

	// An import never replaces a row it did not make.
	createRow(t, h, map[string]any{"key": "S_MI2_SHOUT", "type": "http", "target": "GET https://api.example.test/mine"})
	q.Set("prefix", "S_MI2_")
	got = h.do(t, req{Method: "POST", Path: "/api/import/mcp?" + q.Encode(), Body: map[string]any{}})
	expect(t, got, 422, map[string]any{"ok": false, "state_changed": false})
	if !strings.Contains(string(got.Raw), "import_not_owner") && !strings.Contains(string(got.Raw), "not by this import") {
		t.Fatalf("a hand-made row under an import's key: %s", got.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_MI2_SHOUT"}), 200, map[string]any{"target": "GET https://api.example.test/mine", "version": 1})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_MI2_FORGET"}), 404, nil)

	sync := h.do(t, req{Method: "POST", Path: "/api/mcp/sync?dry_run=1&server=" + url.QueryEscape(up), Body: map[string]any{}})
	expect(t, sync, 200, map[string]any{"ok": true})
	if s := string(sync.Raw); strings.Count(s, `"state":"unchanged"`) != 2 || strings.Contains(s, "drifted") {
		t.Fatalf("sync of an unchanged server: %s", s)
	}

	// The imported tool, called with its pipe arguments, and its receipt.
	got = dispatchCall(t, h, "S_MI_SHOUT", "cat|3")
	expect(t, got, 200, map[string]any{"ok": true, "ran": true, "result": "CATCATCAT"})
	if strings.Contains(string(got.Raw), suiteSecret) {
		t.Fatalf("the credential is in the answer: %s", got.Raw)
	}
	id := proof(t, got)["invocation_id"].(string)
	confirm := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id, NoAuth: true})
	expect(t, confirm, 200, map[string]any{"confirmed": true, "status": "PROVEN_MATERIAL_RESULT"})
	rc := confirm.JSON["receipt"].(map[string]any)
	for k, v := range map[string]any{"key": "S_MI_SHOUT", "runner": "mcp", "ok": true, "material": true,
		"input_sha256": sha("cat|3"), "output_sha256": sha("CATCATCAT")} {
		if rc[k] != v {
			t.Fatalf("receipt %s = %v, want %v (%v)", k, rc[k], v, rc)
		}
	}
	if c, _ := rc["contract_sha256"].(string); len(c) != 64 || c != proof(t, got)["contract_sha256"] {
		t.Fatalf("receipt contract %q, call's %v", c, proof(t, got)["contract_sha256"])
	}

	got = h.do(t, req{Method: "POST", Path: "/api/import/mcp?server=stdio:github", Body: map[string]any{}})
	expect(t, got, 502, map[string]any{"state_changed": false})
	if !strings.Contains(string(got.Raw), "ERR:mcp:stdio_unavailable:github") {
		t.Fatalf("importing a stdio server on a host that runs none: %s", got.Raw)
	}
}

// newBearerMCPServer is a Go SDK MCP server over streamable HTTP on
// loopback that answers only requests with the suite's bearer credential,
// and whose tool description carries that credential (a careless server):
// "shout" (read-only) repeats its word, uppercased, times times; "forget"
// (no annotations) does nothing. It returns the server's URL.
func newBearerMCPServer(t *testing.T) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "bearer", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "shout", Title: "Shouts a word back.", Description: "Repeats a word in capitals. Deployed with key " + suiteSecret + ".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"},"times":{"type":"integer","default":2}},"required":["word"]}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct {
				Word  string `json:"word"`
				Times int    `json:"times"`
			}
			json.Unmarshal(req.Params.Arguments, &a)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat(strings.ToUpper(a.Word), a.Times)}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "forget", Description: "Forgets everything.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	up := newMCPUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+suiteSecret {
			http.Error(w, "bad credential", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	return up.URL + "/mcp"
}
