package mcpcall

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/runners/httpcall"
)

// TestMain serves the fault server over stdio when the test binary is
// started as a stdio MCP server (stdioServer's command).
func TestMain(m *testing.M) {
	if os.Getenv("MCPCALL_TEST_STDIO") == "1" {
		srv := faultServer(&faults{})
		srv.Run(context.Background(), &sdk.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// faults is what the fault server saw.
type faults struct {
	cancelled atomic.Int64 // slow calls whose context ended before they answered
	auth      atomic.Value // the last Authorization header seen on tools/call
	inits     atomic.Int64 // sessions initialized
}

var object = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}}}`)

// faultServer is an MCP server (the Go SDK's) whose tools exercise the
// runner: text, structured content, an image, isError, a slow call, an
// oversized answer, the process exiting mid-call, and the environment it sees.
func faultServer(f *faults) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "faults", Version: "1"}, &sdk.ServerOptions{
		InitializedHandler: func(context.Context, *sdk.InitializedRequest) { f.inits.Add(1) },
	})
	text := func(t string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: t}}}
	}
	argsOf := func(req *sdk.CallToolRequest) map[string]any {
		var m map[string]any
		json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	add := func(name string, h sdk.ToolHandler) {
		s.AddTool(&sdk.Tool{Name: name, Description: name + " tool", InputSchema: object}, h)
	}
	add("echo", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if req.Extra != nil && req.Extra.Header != nil {
			f.auth.Store(req.Extra.Header.Get("Authorization"))
		}
		b, _ := json.Marshal(argsOf(req))
		return text(string(b)), nil
	})
	add("structured", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"t":21}`}}, StructuredContent: map[string]any{"t": 21}}, nil
	})
	add("image", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a pixel"}, &sdk.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}}}, nil
	})
	add("fails", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no such issue"}}}, nil
	})
	add("slow", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		select {
		case <-ctx.Done():
			f.cancelled.Add(1)
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return text("slept"), nil
		}
	})
	add("big", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(strings.Repeat("x", 4096)), nil
	})
	add("crash", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	add("env", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(strings.Join(os.Environ(), "\n")), nil
	})
	add("pid", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(strings.TrimSpace(itoa(os.Getpid()))), nil
	})
	return s
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// upstream is the fault server over streamable HTTP on loopback; restart
// drops every session it holds (a server that expired them).
type upstream struct {
	*httptest.Server
	f       *faults
	handler atomic.Pointer[http.Handler]
}

func newUpstream(t *testing.T, addr string) *upstream {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{f: &faults{}}
	u.restart()
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*u.handler.Load()).ServeHTTP(w, r)
	}))
	u.Listener.Close()
	u.Listener = l
	u.Start()
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) restart() {
	srv := faultServer(u.f)
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	u.handler.Store(&h)
}

// allowing is the outbound policy's client with only the given servers'
// loopback ports allowed.
func allowing(t *testing.T, servers ...*httptest.Server) *http.Client {
	var p outbound.Policy
	for _, s := range servers {
		ap, err := netip.ParseAddrPort(s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		p.AllowPorts = append(p.AllowPorts, outbound.Exact(ap))
	}
	return p.Client(DefaultTimeout)
}

func newRunner(client *http.Client, cfg Config) *Runner {
	cfg.Client = client
	cfg.HTTP = httpcall.New(httpcall.Config{Client: client})
	return New(cfg)
}

// mcpRow is an http row with runner mcp calling tool on server.
func mcpRow(server, tool string) *rowcall.Row {
	r := rowcall.NewRow("T_"+strings.ToUpper(tool), rowcall.TypeHTTP)
	r.Runner, r.Target = "mcp", "MCP "+server+"#"+tool
	r.InputSchema = string(object)
	return &r
}

func env(kv ...string) rowcall.Env {
	return rowcall.EnvFunc(func(name string) (string, bool) {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == name {
				return kv[i+1], true
			}
		}
		return "", false
	})
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
