package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/internal/testenv"
)

// mcpServersFile writes the operator's ROWCALL_MCP_SERVERS file declaring
// the pinned npm server-everything as the stdio server "everything".
func mcpServersFile(t *testing.T) string {
	t.Helper()
	dir := testenv.NPM(t, "mcpservers", filepath.Join("node_modules", "@modelcontextprotocol", "server-memory", "package.json"))
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH (make test installs nodejs)")
	}
	everything := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}, "env": []string{}},
	}})
	file := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
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
	if out := run("--dry-run"); !strings.Contains(out, "would create 14, would update 0, unchanged 0") {
		t.Fatalf("dry run: %s", out)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/EV_GET_SUM"}), 404, nil)
	if out := run(); !strings.Contains(out, "created 14, updated 0, unchanged 0") {
		t.Fatalf("import: %s", out)
	}
	if out := run(); !strings.Contains(out, "created 0, updated 0, unchanged 14") {
		t.Fatalf("second import: %s", out)
	}
	got := h.do(t, req{Method: "POST", Path: "/api/dispatch/EV_GET_SUM", Body: map[string]any{"a": 2, "b": 3}})
	expect(t, got, 200, map[string]any{"ok": true, "result": "The sum of 2 and 3 is 5."})
	row := h.do(t, req{Method: "GET", Path: "/api/directory/EV_GET_STRUCTURED_CONTENT"}).JSON
	if row["type"] != "http" || row["runner"] != "mcp" || row["target"] != "MCP stdio:everything#get-structured-content" || row["sensitive"] != float64(0) {
		t.Fatalf("imported row: %v", row)
	}
	if !strings.Contains(row["content"].(string), "# WHAT: Get Structured Content Tool") {
		t.Fatalf("docstring: %s", row["content"])
	}
	// A tool the server does not mark read-only is sensitive.
	if r := h.do(t, req{Method: "GET", Path: "/api/directory/EV_TOGGLE_SIMULATED_LOGGING"}).JSON; r["sensitive"] != float64(1) {
		t.Fatalf("toggle tool: sensitive %v", r["sensitive"])
	}
}
