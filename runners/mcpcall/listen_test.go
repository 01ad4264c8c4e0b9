package mcpcall

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A pooled session hears the server's notifications/tools/list_changed
// (Config.OnToolsChanged, told the server), on a stream the response cap
// bounds per event: many notifications, more bytes in all than the cap,
// keep the session, and the next call is answered on it.
func TestMCPListChangedHeard(t *testing.T) {
	var inits atomic.Int64
	srv := sdk.NewServer(&sdk.Implementation{Name: "notifying", Version: "1"}, &sdk.ServerOptions{
		InitializedHandler: func(context.Context, *sdk.InitializedRequest) { inits.Add(1) }})
	echo := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "here"}}}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: object}, echo)
	up := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(up.Close)
	server := up.URL + "/mcp"

	var heard atomic.Int64
	var from atomic.Value
	r := newRunner(allowing(t, up), Config{MaxResponse: 1024, OnToolsChanged: func(s string) { from.Store(s); heard.Add(1) }})
	defer r.Close()
	row := mcpRow(server, "echo")
	if out := run(r, context.Background(), row, "", nil); out.Result != "here" {
		t.Fatalf("first call: %s", out.Result)
	}
	for i := range 50 { // each sends list_changed (the SDK coalesces a burst): ~4 KB on the stream, the cap 1 KiB
		srv.AddTool(&sdk.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: object}, echo)
		waitFor(t, "notification "+fmt.Sprint(i+1), func() bool { return heard.Load() > int64(i) })
	}
	if from.Load() != server {
		t.Fatalf("told %v, want %s", from.Load(), server)
	}
	if out := run(r, context.Background(), row, "", nil); out.Result != "here" || inits.Load() != 1 {
		t.Fatalf("after the notifications: %s (sessions %d)", out.Result, inits.Load())
	}
}
