package test

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The worker's Cron Trigger (wrangler.toml's [triggers] crons) checks every
// MCP server the rows call for drift, as the local host does every
// --mcp-sync-every: a tool changed upstream, which nobody synced and the
// server told nobody about, has its row marked drifted and held, and the
// row's mcp_sync shows the check. wrangler dev --test-scheduled runs the
// worker's scheduled handler on GET /__scheduled?cron=….
func TestWorkerCronChecksMCPDrift(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "wrangler.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\[triggers\]\ncrons = \["([^"]+)"`).FindSubmatch(cfg)
	if m == nil {
		t.Fatalf("wrangler.toml has no [triggers] crons entry:\n%s", cfg)
	}
	cron := string(m[1])

	up := newChangingServer(t, true) // silent: only the scheduled check looks
	h := startWorker(t, nil).host
	q := url.Values{"server": {up.URL}, "prefix": {"UP_"}}
	expect(t, h.do(t, req{Method: "POST", Path: "/api/import/mcp?" + q.Encode(), Body: map[string]any{}}), 200, map[string]any{"ok": true})
	tok, _, scope := mint(t, h, map[string]any{"keys": []string{"UP_LOOKUP"}, "pin": []string{"UP_LOOKUP"}})
	pinned := scope["pins"].(map[string]any)["UP_LOOKUP"].(string)
	expect(t, tokenCall(t, h, tok, "UP_LOOKUP", "cat"), 200, map[string]any{"ok": true, "result": `found {"word":"cat"}`})

	up.set("Looks a word up and deletes it.", changedSchema)
	up.remove("old")
	got := h.do(t, req{Method: "GET", Path: "/__scheduled?cron=" + url.QueryEscape(cron), NoAuth: true})
	if got.Status != 200 {
		t.Fatalf("GET /__scheduled?cron=%s: %d %s", cron, got.Status, got.Raw)
	}
	row := rowUntil(t, h, "UP_LOOKUP", "the scheduled check to mark UP_LOOKUP drifted", drifted)
	heldDrifted(t, h, "UP_LOOKUP", "cat", tok, pinned)
	if st, _ := row["mcp_sync"].(map[string]any); st == nil || st["server"] != up.URL || st["error"] != nil || st["last_ok"] == nil {
		t.Fatalf("the row's mcp_sync after the scheduled check: %v", row["mcp_sync"])
	}
	rowUntil(t, h, "UP_OLD", "the removed tool's row to be disabled", func(row map[string]any) bool { return row["enabled"] == float64(0) })
}
