package mcpcall

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/internal/testenv"
)

// serversDir holds the reference MCP servers from npm, pinned in
// test/mcpservers/package-lock.json; installed from the lock file when
// missing (make test does it first).
func serversDir(t *testing.T) string {
	return testenv.NPM(t, "../../test/mcpservers", filepath.Join("node_modules", "@modelcontextprotocol", "server-memory", "package.json"))
}

func serverJS(dir, pkg string) string {
	return filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
}

func node(t *testing.T) string {
	n, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH (make test installs nodejs)")
	}
	return n
}

// everythingHTTP starts server-everything's streamable HTTP transport on a
// free loopback port and returns its /mcp URL and the policy client that
// may reach it.
func everythingHTTP(t *testing.T) (string, *http.Client) {
	addr := testenv.EverythingHTTP(t, serversDir(t))
	ap := netip.MustParseAddrPort(addr)
	return "http://" + addr + "/mcp", outbound.Policy{AllowPorts: []outbound.PortPrefix{outbound.Exact(ap)}}.Client(DefaultTimeout)
}

// toolRows lists the server's tools (through the runner's own session) and
// makes one row per tool: the target, and input_schema from inputSchema.
func toolRows(t *testing.T, r *Runner, server string) map[string]*rowcall.Row {
	t.Helper()
	tools, _, err := r.ListTools(context.Background(), server, "", nil)
	if err != nil {
		t.Fatalf("tools/list on %s: %v", server, err)
	}
	rows := map[string]*rowcall.Row{}
	for _, tool := range tools {
		row := mcpRow(server, tool.Name)
		b, _ := json.Marshal(tool.InputSchema)
		row.InputSchema = string(b)
		rows[tool.Name] = row
	}
	return rows
}

// Every tool of server-everything that answers with text, structured
// content, an image or a resource, called as rows, over streamable HTTP and
// over stdio.
func TestEverythingServer(t *testing.T) {
	url, client := everythingHTTP(t)
	dir := serversDir(t)
	stdio := &Stdio{Servers: map[string]StdioServer{"everything": {Command: node(t), Args: []string{serverJS(dir, "server-everything"), "stdio"}}}}
	t.Cleanup(stdio.Close)
	r := newRunner(client, Config{Stdio: stdio})
	defer r.Close()
	for _, server := range []string{url, "stdio:everything"} {
		rows := toolRows(t, r, server)
		calls := []struct{ tool, body, want string }{
			{"echo", "hello there", "Echo: hello there"},
			{"get-sum", "2|3", "The sum of 2 and 3 is 5."},
			{"get-structured-content", "Chicago", `"structuredContent":{"conditions":"Light rain / drizzle","humidity":82,"temperature":36}`},
			{"get-tiny-image", "", `"type":"image","mimeType":"image/png","data":"iVBOR`},
			{"get-annotated-message", "success|true", `"type":"image"`},
			{"get-resource-links", "2", `"type":"resource_link"`},
			{"get-resource-reference", "Text|1", `"type":"resource"`},
		}
		for _, c := range calls {
			row := rows[c.tool]
			if row == nil {
				t.Fatalf("%s: no tool %s among %d", server, c.tool, len(rows))
			}
			out := run(r, context.Background(), row, c.body, nil)
			if out.Fail != nil || !strings.Contains(out.Result, c.want) {
				t.Errorf("%s %s(%s): %.300s\nwant it to hold %s", server, c.tool, c.body, out.Result, c.want)
			}
		}
		// The tool's progress notifications reach the call's rowcall.Progress,
		// each as the server sent it, before the call returns.
		var mu sync.Mutex
		var heard []string
		ctx := rowcall.WithProgress(context.Background(), func(done, total float64, message string) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, strconv.FormatFloat(done, 'g', -1, 64)+"/"+strconv.FormatFloat(total, 'g', -1, 64))
		})
		if out := run(r, ctx, rows["trigger-long-running-operation"], "0.2|2", nil); out.Fail != nil {
			t.Fatalf("%s: a long-running operation with progress: %s", server, out.Result)
		}
		mu.Lock()
		got := strings.Join(heard, " ")
		mu.Unlock()
		if got != "1/2 2/2" {
			t.Errorf("%s: progress heard %q, want 1/2 2/2", server, got)
		}
		// A slow call cancelled returns at once, and the session serves the next call.
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		go func() { time.Sleep(200 * time.Millisecond); cancel() }()
		out := run(r, ctx, rows["trigger-long-running-operation"], "30|2", nil)
		if out.Fail == nil || time.Since(start) > 10*time.Second {
			t.Fatalf("%s: a cancelled 30 s operation: %s after %v", server, out.Result, time.Since(start))
		}
		if out := run(r, context.Background(), rows["echo"], "after", nil); out.Result != "Echo: after" {
			t.Fatalf("%s: after a cancelled call: %s", server, out.Result)
		}
	}
}

// server-memory over stdio: a knowledge graph written by one call is read
// by the next (one warm process), and it sees only its declared variables.
func TestMemoryServer(t *testing.T) {
	dir := serversDir(t)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	stdio := &Stdio{Servers: map[string]StdioServer{"memory": {Command: node(t), Args: []string{serverJS(dir, "server-memory")},
		Env: map[string]string{"MEMORY_FILE_PATH": "=" + file}}}}
	t.Cleanup(stdio.Close)
	r := New(Config{Stdio: stdio})
	rows := toolRows(t, r, "stdio:memory")
	create := rows["create_entities"]
	if create == nil {
		t.Fatalf("no create_entities among %d tools", len(rows))
	}
	out := run(r, context.Background(), create, `[{"name":"rowcall","entityType":"project","observations":["calls MCP tools as rows"]}]`, nil)
	if out.Fail != nil {
		t.Fatal(out.Result)
	}
	out = run(r, context.Background(), rows["read_graph"], "", nil)
	if !strings.Contains(out.Result, "calls MCP tools as rows") {
		t.Fatalf("read_graph: %s", out.Result)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the declared MEMORY_FILE_PATH was not used: %v", err)
	}
}
