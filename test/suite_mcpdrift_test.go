package test

import (
	"net/url"
	"strings"
	"testing"
)

// suiteMCPDrift: drift is caught for a server whose first row (in key
// order) calls it with a per-caller connection, and a drifted row is held.
// The server's rows: S_MA_OLD (bearer:connection:idp, which no sync can
// use: it runs for no caller) and S_MD_LOOKUP, S_MD_OLD (no credential).
// Sync lists the tools with a row's credential the host holds, so the
// changed tool's row is marked drifted, and every call of it — the owner's,
// an unpinned token's, over /mcp, nested in a flow — is refused with
// definition_changed, saying where to review it (a pinned token stops
// earlier, with contract_changed), until the owner accepts the change. Once
// every row needs a per-caller connection, a sync cannot list the tools:
// its answer and the rows' mcp_sync say why, not silently.
func suiteMCPDrift(t *testing.T, tg *target) {
	h := tg.host
	up := newChangingServer(t, true) // silent: only the syncs below look
	imp := func(q url.Values) {
		t.Helper()
		q.Set("server", up.URL)
		expect(t, h.do(t, req{Method: "POST", Path: "/api/import/mcp?" + q.Encode(), Body: map[string]any{}}), 200, map[string]any{"ok": true})
	}
	imp(url.Values{"prefix": {"S_MD_"}})
	imp(url.Values{"prefix": {"S_MA_"}, "tool": {"old"}})
	connect := map[string]any{"auth": "bearer:connection:idp"}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/S_MA_OLD", Body: connect}), 200, map[string]any{"ok": true})
	createRow(t, h, map[string]any{"key": "S_MD_FLOW", "type": "flow", "content": "# WHAT: looks a word up in a flow\nS_MD_LOOKUP: $1"})
	free, _, _ := mint(t, h, map[string]any{"keys": []string{"S_MD_LOOKUP"}})
	pinnedTok, _, scope := mint(t, h, map[string]any{"keys": []string{"S_MD_LOOKUP"}, "pin": []string{"S_MD_LOOKUP"}})
	pinned := scope["pins"].(map[string]any)["S_MD_LOOKUP"].(string)
	expect(t, tokenCall(t, h, free, "S_MD_LOOKUP", "cat"), 200, map[string]any{"ok": true, "result": `found {"word":"cat"}`})

	sync := func(q string) resp {
		t.Helper()
		got := h.do(t, req{Method: "POST", Path: "/api/mcp/sync?server=" + url.QueryEscape(up.URL) + q, Body: map[string]any{}})
		expect(t, got, 200, map[string]any{"ok": true})
		return got
	}
	up.set("Looks a word up and deletes it.", changedSchema)
	if s := string(sync("").Raw); !strings.Contains(s, `"state":"drifted"`) || strings.Contains(s, `"error"`) {
		t.Fatalf("sync of a server whose first row uses a per-caller connection: %s", s)
	}
	row := h.do(t, req{Method: "GET", Path: "/api/directory/S_MD_LOOKUP"}).JSON
	if !drifted(row) {
		t.Fatalf("the changed tool's row is not marked drifted: %v", row)
	}
	if st, _ := row["mcp_sync"].(map[string]any); st == nil || st["server"] != up.URL || st["error"] != nil || st["last_ok"] == nil {
		t.Fatalf("the row's mcp_sync after a sync that listed the tools: %v", row["mcp_sync"])
	}

	// Held for every caller until the owner decides.
	got := dispatchCall(t, h, "S_MD_LOOKUP", "dog")
	refused(t, h, got, 409, "definition_changed")
	if fix, _ := got.JSON["how_to_fix"].(string); !strings.Contains(fix, "/#/row/S_MD_LOOKUP") || !strings.Contains(fix, "/api/mcp/sync?accept=S_MD_LOOKUP") {
		t.Fatalf("the refusal does not say where to review the change: %s", got.Raw)
	}
	refused(t, h, tokenCall(t, h, free, "S_MD_LOOKUP", "dog"), 409, "definition_changed")
	got = tokenCall(t, h, pinnedTok, "S_MD_LOOKUP", "dog")
	if e, _ := got.JSON["error"].(string); got.Status != 409 || !strings.HasPrefix(e, "contract_changed:"+pinned+"!=") {
		t.Fatalf("a pinned token's call of the drifted row: %d %s", got.Status, got.Raw)
	}
	if r, _ := dispatchCall(t, h, "S_MD_FLOW", "dog").JSON["result"].(string); !strings.Contains(r, "definition_changed") {
		t.Fatalf("a flow's nested call of the drifted row: %q", r)
	}
	if res := connectMCP(t, h, "x-terminal-key", h.Key).call(t, "S_MD_LOOKUP", map[string]any{"word": "dog"}); !res.IsError || !strings.Contains(strings.Join(texts(res), " "), "definition_changed") {
		t.Fatalf("an MCP call of the drifted row: %v %q", res.IsError, texts(res))
	}

	// The owner accepts, here through a bearer token: the row runs again,
	// with the new definition, and its new version names who accepted it.
	accept := h.do(t, req{Method: "POST", Path: "/api/mcp/sync?server=" + url.QueryEscape(up.URL) + "&accept=S_MD_LOOKUP", Body: map[string]any{},
		NoAuth: true, Header: map[string]string{"Authorization": "Bearer " + h.Key}})
	if s := string(accept.Raw); accept.Status != 200 || !strings.Contains(s, `"state":"accepted"`) {
		t.Fatalf("accept: %d %s", accept.Status, s)
	}
	expect(t, dispatchCall(t, h, "S_MD_LOOKUP", "dog"), 200, map[string]any{"ok": true, "result": `found {"word":"dog"}`})
	if got := writers(t, h, "S_MD_LOOKUP"); len(got) < 3 || got[0] != "insert owner:terminal-key" || got[len(got)-1] != "update owner:bearer" {
		t.Fatalf("the imported, drifted and accepted row's history names %q", got)
	}

	// Every row needs a per-caller connection: the sync cannot list the
	// tools, and says so on its answer and on the rows.
	for _, k := range []string{"S_MD_LOOKUP", "S_MD_OLD"} {
		expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/" + k, Body: connect}), 200, map[string]any{"ok": true})
	}
	if s := string(sync("").Raw); !strings.Contains(s, `"error"`) || !strings.Contains(s, "per-caller connection") {
		t.Fatalf("a sync that cannot list the tools: %s", s)
	}
	st, _ := h.do(t, req{Method: "GET", Path: "/api/directory/S_MD_OLD"}).JSON["mcp_sync"].(map[string]any)
	if e, _ := st["error"].(string); !strings.Contains(e, "per-caller connection") || !strings.Contains(e, "idp") || st["failures"] != float64(1) {
		t.Fatalf("the row's mcp_sync after a sync that could not list the tools: %v", st)
	}
}
