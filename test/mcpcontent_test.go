package test

import (
	"context"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An imported MCP server's tools called over rowcall's /mcp answer what the
// tool answered: an image as an image block, a resource link as a
// resource_link, an embedded resource as a resource, the tool's own
// structuredContent (also for a row that declares no output), and the tool's progress notifications reach a client that sent
// a progressToken. The call's receipt fields are in _meta, and the API's
// result is still the tool's JSON as a string.
func TestMCPRowContentPassesThrough(t *testing.T) {
	h := startHost(t, nil, "ROWCALL_MCP_SERVERS="+mcpServersFile(t))
	cmd := []string{"import", "mcp", "stdio:everything", "--prefix", "EV_", "--url", h.URL, "--data", h.Data}
	if out, err := exec.Command(binary, cmd...).CombinedOutput(); err != nil {
		t.Fatalf("rowcall %s: %v\n%s", strings.Join(cmd, " "), err, out)
	}
	direct := everythingDirect(t)
	s := connectMCP(t, h, "x-terminal-key", h.Key)

	// Each block as the tool sent it, then the receipt's text.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"get-tiny-image", map[string]any{}},
		{"get-resource-links", map[string]any{"count": 2}},
		{"get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 1}},
	} {
		key := "EV_" + strings.ToUpper(strings.ReplaceAll(c.tool, "-", "_"))
		want := direct.call(t, c.tool, c.args)
		got := s.call(t, key, c.args)
		if got.IsError || len(got.Content) != len(want.Content)+1 {
			t.Fatalf("%s: isError %v, %d blocks, want the tool's %d and the receipt: %s", key, got.IsError, len(got.Content), len(want.Content), asJSON(got))
		}
		if g, w := asJSON(got.Content[:len(want.Content)]), asJSON(want.Content); g != w {
			t.Errorf("%s: blocks\n%s\nwant the tool's\n%s", key, g, w)
		}
		if rc, ok := got.Content[len(want.Content)].(*sdk.TextContent); !ok || !strings.HasPrefix(rc.Text, "receipt inv_") {
			t.Errorf("%s: the last block is not the receipt: %s", key, asJSON(got.Content[len(want.Content)]))
		}
		if got.StructuredContent != nil {
			t.Errorf("%s: structuredContent %v from a tool that sent none", key, got.StructuredContent)
		}
		confirmed(t, h, callFields(t, got)["invocation_id"].(string), "PROVEN_MATERIAL_RESULT")
	}
	image := s.call(t, "EV_GET_TINY_IMAGE", map[string]any{})
	if img, ok := image.Content[1].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" || len(img.Data) == 0 {
		t.Fatalf("the tiny image: %s", asJSON(image.Content))
	}
	links := s.call(t, "EV_GET_RESOURCE_LINKS", map[string]any{"count": 2})
	if _, ok := links.Content[1].(*sdk.ResourceLink); !ok {
		t.Fatalf("resource links: %s", asJSON(links.Content))
	}

	// The tool's structuredContent: by its tool, which declares the tool's
	// outputSchema, and by a row of the same tool that declares none (its
	// call's fields are in _meta, not in structuredContent).
	imported := h.do(t, req{Method: "GET", Path: "/api/directory/EV_GET_STRUCTURED_CONTENT"}).JSON
	createRow(t, h, map[string]any{"key": "EV_WEATHER_UNDECLARED", "type": "http", "runner": "mcp", "target": imported["target"],
		"input_schema": imported["input_schema"], "planner_visible": 1})
	s = connectMCP(t, h, "x-terminal-key", h.Key)
	want := direct.call(t, "get-structured-content", map[string]any{"location": "Chicago"})
	for _, key := range []string{"EV_GET_STRUCTURED_CONTENT", "EV_WEATHER_UNDECLARED"} {
		res := s.call(t, key, map[string]any{"location": "Chicago"})
		if res.IsError || !reflect.DeepEqual(structured(t, res.StructuredContent), structured(t, want.StructuredContent)) {
			t.Errorf("%s: structuredContent %s, want the tool's %s", key, asJSON(res.StructuredContent), asJSON(want.StructuredContent))
		}
		if callFields(t, res)["ran"] != true {
			t.Errorf("%s: the call's fields in _meta: %v", key, res.Meta)
		}
	}

	// The tool's progress reaches the client's progressToken.
	params := &sdk.CallToolParams{Name: "EV_TRIGGER_LONG_RUNNING_OPERATION", Arguments: map[string]any{"duration": 0.2, "steps": 2}}
	params.SetProgressToken("client-token")
	res, err := s.cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("long-running operation: %v %s", err, asJSON(res))
	}
	for _, step := range []float64{1, 2} {
		select {
		case p := <-s.progress:
			if p.ProgressToken != "client-token" || p.Progress != step || p.Total != 2 {
				t.Fatalf("progress %s, want %v of 2 for client-token", asJSON(p), step)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no progress %v of 2 reached the client", step)
		}
	}

	// The API's result stays a string: the tool's JSON.
	got := dispatchCall(t, h, "EV_GET_TINY_IMAGE", "")
	if r, _ := got.JSON["result"].(string); got.Status != 200 || !strings.Contains(r, `"type":"image","mimeType":"image/png","data":"iVBOR`) {
		t.Fatalf("the API's result: %d %.300s", got.Status, got.Raw)
	}
}

// everythingDirect is a client of server-everything itself, over stdio:
// what its tools answer without rowcall between.
func everythingDirect(t *testing.T) *mcpSession {
	t.Helper()
	node, everything := everythingJS(t)
	cmd := exec.Command(node, everything, "stdio")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "rowcall-test-direct", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("server-everything over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpSession{cs: cs}
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
