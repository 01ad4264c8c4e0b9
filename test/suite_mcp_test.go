package test

import (
	"strings"
	"testing"
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
