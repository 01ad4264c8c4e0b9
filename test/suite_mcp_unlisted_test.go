package test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
)

// suiteMCPUnlisted: tools/list carries at most MaxTools rows (50), but
// tools/call reaches every row the caller may see, listed or not (of 200,
// the 200th by name), over a session and over the per-request protocol; a
// row outside a token's scope stays an unknown tool to it, and one above its
// risk ceiling is refused by the gate (risk_ceiling), which the mint's answer
// warned of (risk_note).
func suiteMCPUnlisted(t *testing.T, tg *target, up *upstream) {
	h := tg.host
	rows := make([]rowcall.Row, 200)
	for i := range rows {
		rows[i] = rowcall.NewRow(fmt.Sprintf("S_UNL_%03d", i), rowcall.TypeHTTP)
		rows[i].Category, rows[i].Target = "s_unl", "GET "+up.URL+"/v1/forecast?latitude=$1&longitude=$2"
		rows[i].Content = "# WHAT: Current temperature at a place, one of many.\n# ARGS: $1=latitude | $2=longitude"
	}
	rows[1].Sensitive = 1 // as an imported MCP tool without readOnlyHint, with its input schema
	rows[1].InputSchema = `{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"}}}`
	importRows(t, h, rows)
	got := h.do(t, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"keys": []string{"S_UNL_000", "S_UNL_001"}}})
	expect(t, got, 201, map[string]any{"ok": true})
	if note, _ := got.JSON["risk_note"].(string); !strings.Contains(note, "(S_UNL_001)") || !strings.Contains(note, `"risk_ceiling":"high"`) {
		t.Fatalf("a token whose default ceiling hides a sensitive row of its scope is minted without saying so: %s", got.Raw)
	}
	secret := got.JSON["token"].(string)
	ctx := context.Background()
	args := map[string]any{"args": "37.77|-122.42"}
	for _, version := range []string{"2025-11-25", ""} { // "": the Go SDK client's newest, the per-request protocol
		owner := connectMCPAt(t, h, "x-terminal-key", h.Key, version)
		listed := owner.tools(t)
		if len(listed) > 52 {
			t.Fatalf("%q: tools/list has %d tools, more than 50 rows and the two meta-tools", version, len(listed))
		}
		unlisted := ""
		for _, r := range rows {
			if _, ok := listed[r.Key]; !ok {
				unlisted = r.Key
			}
		}
		if unlisted == "" {
			t.Fatalf("%q: every one of %d rows is listed: %d tools", version, len(rows), len(listed))
		}
		checkSucceeded(t, h, owner.call(t, unlisted, args), "temperature_2m")
		checkSucceeded(t, h, owner.call(t, rows[len(rows)-1].Key, args), "temperature_2m") // the 200th, by name

		scoped := connectMCPAt(t, h, "Authorization", "Bearer "+secret, version)
		checkSucceeded(t, h, scoped.call(t, "S_UNL_000", args), "temperature_2m")
		if _, ok := scoped.tools(t)["S_UNL_001"]; ok {
			t.Fatalf("%q: a sensitive row above the token's ceiling is listed", version)
		}
		if res := scoped.call(t, "S_UNL_001", map[string]any{"latitude": 1, "longitude": 2}); !res.IsError || !strings.Contains(texts(res)[0], "risk_ceiling") {
			t.Fatalf("%q: a sensitive row above the token's ceiling: %v", version, texts(res))
		}
		_, err := scoped.cs.CallTool(ctx, &sdk.CallToolParams{Name: unlisted, Arguments: args})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("%q: a token called %s, outside its scope: %v", version, unlisted, err)
		}
	}
}
