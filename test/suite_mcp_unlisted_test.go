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
// tools/call reaches every row the caller may see, listed or not, over a
// session and over the per-request protocol; a row outside a token's scope
// stays an unknown tool to it.
func suiteMCPUnlisted(t *testing.T, tg *target, up *upstream) {
	h := tg.host
	rows := make([]rowcall.Row, 70)
	for i := range rows {
		rows[i] = rowcall.NewRow(fmt.Sprintf("S_UNL_%02d", i), rowcall.TypeHTTP)
		rows[i].Category, rows[i].Target = "s_unl", "GET "+up.URL+"/v1/forecast?latitude=$1&longitude=$2"
		rows[i].Content = "# WHAT: Current temperature at a place, one of many.\n# ARGS: $1=latitude | $2=longitude"
	}
	importRows(t, h, rows)
	secret, _, _ := mint(t, h, map[string]any{"keys": []string{"S_UNL_00"}})
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
			t.Fatalf("%q: every one of 70 rows is listed: %d tools", version, len(listed))
		}
		checkSucceeded(t, h, owner.call(t, unlisted, args), "temperature_2m")

		scoped := connectMCPAt(t, h, "Authorization", "Bearer "+secret, version)
		checkSucceeded(t, h, scoped.call(t, "S_UNL_00", args), "temperature_2m")
		_, err := scoped.cs.CallTool(ctx, &sdk.CallToolParams{Name: unlisted, Arguments: args})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("%q: a token called %s, outside its scope: %v", version, unlisted, err)
		}
	}
}
