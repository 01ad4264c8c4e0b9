package test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// The official MCP conformance suite (npm @modelcontextprotocol/conformance,
// pinned in test/conformance in two versions, 0.1.16 and 0.2.0-alpha.12, with
// the Node 22 it needs) runs its server scenarios against /mcp on the
// embedded host and on the worker, each version in a subtest named for it on
// the same host. A scenario may fail only when the version's
// test/conformance/expected-failures-<target>.yaml (0.1.16) or
// expected-failures-<target>-0.2.yaml names it (each entry's reason is in
// docs/mcp.md, "Conformance"); a scenario that passes while named fails the
// run too (the suite calls the list stale).
//
//	go test ./test -run 'TestMCPConformance'
//	go test ./test -run 'TestMCPConformance/worker/0.2.0-alpha.12'
//
// TestMCPConformanceClient runs both versions' client scenarios against
// rowcall's MCP client side (runners/mcpcall, through test/conformance/client),
// with test/conformance/expected-failures-client.yaml and -client-0.2.yaml.

// conformanceDir is the pinned suite, installed (make mcp-conformance) when
// its node_modules is missing.
func conformanceDir(t *testing.T) (dir, node string) {
	t.Helper()
	dir, _ = filepath.Abs("conformance")
	node = filepath.Join(dir, "node_modules", "node-"+runtime.GOOS+"-"+map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH], "bin", "node")
	_, err := os.Stat(node)
	for _, s := range conformanceSuites {
		if err == nil {
			_, err = os.Stat(filepath.Join(dir, "node_modules", s.pkg, "package.json"))
		}
	}
	if err != nil {
		install := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	return dir, node
}

// conformanceSuites are the versions of the suite pinned in
// test/conformance/package.json, each under its own package name, with its
// own expected-failures files: expected-failures-<target><suffix>.yaml.
var conformanceSuites = []struct{ pkg, suffix string }{
	{"@modelcontextprotocol/conformance", ""}, // 0.1.16
	{"conformance-next", "-0.2"},              // 0.2.0-alpha.12
}

// eachConformanceSuite runs f in a subtest of t named for each pinned
// version of the suite (its installed package.json's version), given the
// suite's entry point and its expected-failures suffix.
func eachConformanceSuite(t *testing.T, dir string, f func(t *testing.T, index, suffix string)) {
	t.Helper()
	for _, s := range conformanceSuites {
		pkg := filepath.Join(dir, "node_modules", filepath.FromSlash(s.pkg))
		data, err := os.ReadFile(filepath.Join(pkg, "package.json"))
		var meta struct{ Version string }
		if err == nil {
			err = json.Unmarshal(data, &meta)
		}
		if err != nil || meta.Version == "" {
			t.Fatalf("the conformance suite %s: no version in its package.json (%v)", s.pkg, err)
		}
		t.Run(meta.Version, func(t *testing.T) { f(t, filepath.Join(pkg, "dist", "index.js"), s.suffix) })
	}
}

// conformanceRows are the rows the suite's scenarios call by name: the
// tools a directory can honestly offer as rows (an http row's answer, its
// failure, fn rows whose results are media, a flow whose steps report
// progress, a row whose input_schema uses JSON Schema 2020-12, MCP rows
// whose tool answers an embedded resource, or text, an image and a resource
// together, passed on as the tool sent them), on loopback upstreams (up, and
// the MCP server at mcpUp).
func conformanceRows(t *testing.T, h *host, up *upstream, mcpUp string) {
	createRow(t, h, map[string]any{"key": "test_simple_text", "type": "http", "category": "conformance", "target": "GET " + up.URL + "/simple-text",
		"content": "# WHAT: Answers a fixed sentence (the conformance suite's simple text tool)."})
	createRow(t, h, map[string]any{"key": "test_error_handling", "type": "http", "category": "conformance", "target": "GET " + up.URL + "/fail",
		"content": "# WHAT: Always fails (the conformance suite's error tool)."})
	// fn rows whose result is media: the echo module hands back its argument,
	// here a fixed data: URL, which /mcp answers as image or audio content.
	echo, _ := wasmexamples.ByName("echo")
	expect(t, putModule(t, h, "echo", echo.Wasm), 200, nil)
	for key, url := range map[string]string{"test_image_content": "data:image/png;base64," + base64.StdEncoding.EncodeToString(onePixelPNG),
		"test_audio_content": "data:audio/wav;base64," + base64.StdEncoding.EncodeToString(silentWAV)} {
		createRow(t, h, map[string]any{"key": key, "type": "fn", "target": "echo", "category": "conformance",
			"content": "# WHAT: Fixed media (the conformance suite's " + key + " tool).\n[\"" + url + "\"]"})
	}
	createRow(t, h, map[string]any{"key": "test_tool_with_progress", "type": "flow", "category": "conformance",
		"content": "# WHAT: Three steps, each reported as progress (the conformance suite's progress tool).\ntest_simple_text: > test_simple_text: > test_simple_text:"})
	createRow(t, h, map[string]any{"key": "json_schema_2020_12_tool", "type": "http", "category": "conformance", "target": "GET " + up.URL + "/simple-text?name=$1",
		"content": "# WHAT: Tool with JSON Schema 2020-12 features (the conformance suite's schema tool).",
		"input_schema": `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
			`"$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
			`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}`})
	for key, tool := range map[string]string{"test_embedded_resource": "embedded_resource", "test_multiple_content_types": "multiple_content_types"} {
		createRow(t, h, map[string]any{"key": key, "type": "http", "runner": "mcp", "category": "conformance", "target": "MCP " + mcpUp + "#" + tool,
			"content": "# WHAT: An MCP tool's content blocks (the conformance suite's " + key + " tool)."})
	}
}

// conformanceMCPUpstream is a Go SDK MCP server on loopback whose tools
// answer what the suite's content scenarios ask for: an embedded resource,
// and text, an image and a resource together. It returns the server's URL.
func conformanceMCPUpstream(t *testing.T) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "conformance-content", Version: "1"}, nil)
	answer := func(content ...sdk.Content) sdk.ToolHandler {
		return func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: content}, nil
		}
	}
	schema := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&sdk.Tool{Name: "embedded_resource", InputSchema: schema}, answer(
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}))
	srv.AddTool(&sdk.Tool{Name: "multiple_content_types", InputSchema: schema}, answer(
		&sdk.TextContent{Text: "Multiple content types test:"},
		&sdk.ImageContent{Data: onePixelPNG, MIMEType: "image/png"},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}}))
	return newMCPUpstream(t, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)).URL + "/mcp"
}

// onePixelPNG is a 1×1 red PNG; silentWAV a WAV header with no samples.
var (
	onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	silentWAV      = []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")
)

func TestMCPConformance(t *testing.T) {
	dir, node := conformanceDir(t)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple-text":
			fmt.Fprint(w, "This is a simple text response for testing.")
		default:
			w.WriteHeader(500)
			fmt.Fprint(w, "This tool intentionally returns an error for testing")
		}
	})
	mcpUp := conformanceMCPUpstream(t)
	for _, b := range backends {
		if b.Name != "embedded" && b.Name != "worker" {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			tg := b.Start(t, nil)
			conformanceRows(t, tg.host, up, mcpUp)
			// The suite sends no credential: a loopback proxy adds the owner's.
			target, _ := url.Parse(tg.URL)
			proxy := httputil.NewSingleHostReverseProxy(target)
			proxy.FlushInterval = -1 // streams pass at once
			// A new connection for each request: the suite's POSTs are not
			// retried by a transport, so one written on a kept-alive
			// connection the host had just closed would fail the scenario
			// ("use of closed network connection") on a busy machine.
			proxy.Transport = &http.Transport{DisableKeepAlives: true}
			key := tg.Key
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Header.Set("Authorization", "Bearer "+key)
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			// One host for both versions of the suite, one after the other.
			eachConformanceSuite(t, dir, func(t *testing.T, index, suffix string) {
				runConformance(t, dir, node, index, b.Name+suffix, "server", "--suite", "all", "--url", front.URL+"/mcp")
			})
		})
	}
}

// runConformance runs the suite at index in mode with args and the expected
// failures of expected-failures-<name>.yaml, and fails t when it fails. The
// suite's checks.json per scenario go to a temporary directory, or under
// $ROWCALL_CONFORMANCE_OUT/<name> when it is set.
func runConformance(t *testing.T, dir, node, index, name, mode string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	results := t.TempDir()
	if o := os.Getenv("ROWCALL_CONFORMANCE_OUT"); o != "" {
		results = filepath.Join(o, name)
	}
	args = append([]string{index, mode, "--expected-failures", filepath.Join(dir, "expected-failures-"+name+".yaml"), "--output-dir", results}, args...)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("conformance suite (%s, %s):\n%s", mode, name, out)
	if err != nil {
		t.Logf("the failed checks, with the suite's reasons:\n%s", failedChecks(results))
		t.Fatalf("the conformance suite failed (%s, %v): a scenario failed that expected-failures-%s.yaml does not name, or one it names now passes", mode, err, name)
	}
}

// failedChecks lists every check that did not succeed in the suite's
// results under dir (one checks.json per scenario), with its error message.
func failedChecks(dir string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var checks []struct{ ID, Status, ErrorMessage string }
		json.Unmarshal(data, &checks)
		for _, c := range checks {
			if c.Status != "SUCCESS" && c.Status != "INFO" {
				fmt.Fprintf(&b, "%s: %s: %s\n", c.ID, c.Status, c.ErrorMessage)
			}
		}
	}
	return b.String()
}

// TestMCPConformanceClient runs every client scenario of both versions of
// the suite against rowcall's MCP client side: the suite starts its server for each scenario
// and runs test/conformance/client (built here), which makes the rows a user
// would write for that server and calls them through runners/mcpcall. An
// oauth: auth column without token_url reaches the client-credentials
// servers by discovery. What fails is named in expected-failures-client.yaml
// (0.1.16) and expected-failures-client-0.2.yaml, each reason in docs/mcp.md
// ("Conformance").
func TestMCPConformanceClient(t *testing.T) {
	dir, node := conformanceDir(t)
	bin := filepath.Join(t.TempDir(), "client")
	build := exec.Command("go", "build", "-o", bin, "./conformance/client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./test/conformance/client: %v\n%s", err, out)
	}
	eachConformanceSuite(t, dir, func(t *testing.T, index, suffix string) {
		runConformance(t, dir, node, index, "client"+suffix, "client", "--suite", "all", "--command", bin)
	})
}
