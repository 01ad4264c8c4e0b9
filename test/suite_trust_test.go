package test

import (
	"net/url"
	"strings"
	"testing"
)

// suiteTrust: the statements behind tokens, the receipt chain, import and
// search run on every database: a scoped token invokes its row and nothing
// else until revoked, the signed chain exports, import upserts, ask finds.
func suiteTrust(t *testing.T, tg *target, up *upstream) {
	h := tg.host
	createRow(t, h, map[string]any{"key": "S_TOK", "type": "http", "target": "GET " + up.URL + "/tok?q=$1",
		"content": "# WHAT: Look up the suite's zebra inventory by warehouse.\n# ARGS: $1=warehouse"})
	secret, id, _ := mint(t, h, map[string]any{"name": "suite", "keys": []string{"S_TOK"}, "expires_in": 3600})
	expect(t, tokenCall(t, h, secret, "S_TOK", "w1"), 200, map[string]any{"ok": true, "ran": true})
	expect(t, tokenCall(t, h, secret, "S_REG2", ""), 404, map[string]any{"error": "unknown_key", "ran": false})
	expect(t, asToken(t, h, secret, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "S_NOPE", "type": "http", "content": "# WHAT: x"}}), 403, nil)
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/tokens/" + id}), 200, map[string]any{"ok": true, "id": id})
	if got := tokenCall(t, h, secret, "S_TOK", "w1"); got.Status == 200 {
		t.Fatalf("a revoked token still invokes: %s", got.Raw)
	}

	got := h.do(t, req{Method: "GET", Path: "/api/receipts"})
	expect(t, got, 200, nil)
	if !strings.Contains(string(got.Raw), `"sig"`) || !strings.Contains(string(got.Raw), "S_TOK") {
		t.Fatalf("receipt export %.300s", got.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/.well-known/rowcall-receipt-keys", NoAuth: true}), 200, nil)

	expect(t, h.do(t, req{Method: "POST", Path: "/api/import", Body: map[string]any{"rows": []map[string]any{
		{"key": "S_IMPORTED", "type": "flow", "content": "# WHAT: Imported through the suite's import call.\nS_TOK: $1"}}}}), 200, map[string]any{"ok": true})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_IMPORTED"}), 200, map[string]any{"type": "flow"})
	got = h.do(t, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape("zebra inventory in a warehouse") + "&limit=5"})
	expect(t, got, 200, nil)
	matches, _ := got.JSON["matches"].([]any)
	if len(matches) == 0 || matches[0].(map[string]any)["key"] != "S_TOK" {
		t.Fatalf("ask: %s", got.Raw)
	}
}
