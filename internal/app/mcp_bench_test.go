package app_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/testenv"
)

// mcpBench is the host's API (app.New, as a host wires it, the event-log
// check good for 1 ms as on a host) over a fresh SQLite file, with the http
// row TEMP calling a loopback upstream, and beside it a direct MCP server
// (the SDK alone) whose one tool makes the same upstream request; the MCP
// row TEMP_MCP calls that direct server's tool.
type mcpBench struct {
	rowcall, direct, upstream *httptest.Server
}

func newMCPBench(b *testing.B) *mcpBench {
	b.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"temperature_2m":15.7,"q":"`+r.URL.RawQuery+`"}`)
	}))
	b.Cleanup(up.Close)
	direct := sdk.NewServer(&sdk.Implementation{Name: "direct", Version: "1"}, nil)
	client := &http.Client{Transport: pooled}
	direct.AddTool(&sdk.Tool{Name: "TEMP", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := client.Get(up.URL + "/v1/forecast?latitude=1&longitude=2")
			if err != nil {
				return nil, err
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}}}, nil
		})
	d := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return direct }, nil))
	b.Cleanup(d.Close)
	signer, _ := testenv.Signer(b)
	settings := app.ReadSettings(func(string) string { return "" })
	settings.AllowOutbound, settings.NoExamples = strings.TrimPrefix(up.URL, "http://")+","+strings.TrimPrefix(d.URL, "http://"), true
	a, err := app.New(settings, app.Platform{DB: testdb.Open(b), Signer: signer, Fresh: time.Millisecond,
		OwnerKeys: func() []string { return []string{"owner"} },
		Client:    func(p outbound.Policy, t time.Duration) *http.Client { return p.Client(t) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Close)
	srv := httptest.NewServer(a.Handler)
	b.Cleanup(srv.Close)
	post(b, srv.URL+"/api/directory", `{"key":"TEMP","type":"http","target":"GET `+up.URL+`/v1/forecast?latitude=$1&longitude=$2",`+
		`"content":"# WHAT: Current temperature\n# ARGS: $1=latitude | $2=longitude"}`, 201)
	post(b, srv.URL+"/api/directory", `{"key":"TEMP_MCP","type":"http","runner":"mcp","target":"MCP `+d.URL+`#TEMP",`+
		`"content":"# WHAT: Current temperature, from the direct MCP server"}`, 201)

	return &mcpBench{rowcall: srv, direct: d, upstream: up}
}

func post(b *testing.B, url, body string, want int) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("x-terminal-key", "owner")
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Transport: pooled}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != want {
		b.Fatalf("POST %s: %d %s", url, res.StatusCode, got)
	}
}

// pooled keeps enough idle connections for 8 clients (the default keeps 2 a host).
var pooled = &http.Transport{MaxIdleConnsPerHost: 64}

type keyTransport struct{}

func (keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-terminal-key", "owner")
	return pooled.RoundTrip(r)
}

// connect opens one Go SDK client session on endpoint, in the protocol the
// direct server speaks (2025-11-25: the SDK's newest, 2026-07-28, is
// stateless, which rowcall's /mcp would answer and the direct server not).
func connect(b *testing.B, endpoint string) *sdk.ClientSession {
	b.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: keyTransport{}}, DisableStandaloneSSE: true, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(b *testing.B, cs *sdk.ClientSession, args map[string]any) {
	callNamed(b, cs, "TEMP", args)
}

func callNamed(b *testing.B, cs *sdk.ClientSession, name string, args map[string]any) {
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "temperature_2m") {
		b.Errorf("tools/call: %v %v", res, err)
	}
}

// BenchmarkMCPOverhead is one http row called three ways, one at a time and
// interleaved (direct MCP server, rowcall's MCP tools/call, rowcall's POST
// /api/dispatch), and the MCP row TEMP_MCP (rowcall's tools/call proxied to
// the direct server), so the p50s come from the same moments of a shared
// machine; it reports each p50 and rowcall MCP's overhead over the others.
//
//	go test ./internal/app -run xxx -bench MCPOverhead -benchtime 2000x -count 3
func BenchmarkMCPOverhead(b *testing.B) {
	m := newMCPBench(b)
	direct, mcp := connect(b, m.direct.URL), connect(b, m.rowcall.URL+"/mcp")
	args := map[string]any{"args": "1|2"}
	probes := []func(){
		func() { callTool(b, direct, nil) },
		func() { callTool(b, mcp, args) },
		func() { post(b, m.rowcall.URL+"/api/dispatch", `{"key":"TEMP","body":"1|2"}`, 200) },
		func() { callNamed(b, mcp, "TEMP_MCP", nil) },
	}
	for range 50 { // warm up
		for _, p := range probes {
			p()
		}
	}
	took := make([][]time.Duration, len(probes))
	cpu := make([]time.Duration, len(probes))
	b.ResetTimer()
	for range b.N {
		for i, p := range probes {
			c, t := cpuTime(), time.Now()
			p()
			took[i] = append(took[i], time.Since(t))
			cpu[i] += cpuTime() - c
		}
	}
	b.StopTimer()
	pd, pm, pr, pu := p50(took[0]), p50(took[1]), p50(took[2]), p50(took[3])
	b.ReportMetric(us(pd), "direct-p50-µs")
	b.ReportMetric(us(pm), "mcp-p50-µs")
	b.ReportMetric(us(pr), "dispatch-p50-µs")
	b.ReportMetric(us(pm-pd), "mcp-over-direct-µs")
	b.ReportMetric(us(pm-pr), "mcp-over-dispatch-µs")
	b.ReportMetric(us(pu), "mcp-row-p50-µs")
	b.ReportMetric(us(pu-pd), "mcp-row-over-direct-µs")
	for i, name := range []string{"direct", "mcp", "dispatch", "mcp-row"} {
		b.ReportMetric(us(cpu[i])/float64(b.N), name+"-cpu-µs/call")
	}
	b.ReportMetric(0, "ns/op")
}

// cpuTime is the CPU this process has used (user and system), client and
// servers together: the three probes share the client's share alike.
func cpuTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkMCPCalls is rowcall's MCP tools/call of the http row from 8
// clients at once, each its own session: calls/s.
//
//	go test ./internal/app -run xxx -bench MCPCalls -benchtime 5s -count 3
func BenchmarkMCPCalls(b *testing.B) {
	m := newMCPBench(b)
	for _, target := range []string{"rowcall", "direct"} {
		b.Run(target, func(b *testing.B) {
			url, args := m.rowcall.URL+"/mcp", map[string]any{"args": "1|2"}
			if target == "direct" {
				url, args = m.direct.URL, nil
			}
			sessions := make(chan *sdk.ClientSession, 8)
			for range 8 {
				sessions <- connect(b, url)
			}
			var wg sync.WaitGroup
			work := make(chan struct{})
			b.ResetTimer()
			start := time.Now()
			for range 8 {
				cs := <-sessions
				wg.Go(func() {
					for range work {
						callTool(b, cs, args)
					}
				})
			}
			for range b.N {
				work <- struct{}{}
			}
			close(work)
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
		})
	}
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkMCPRowCall is one tools/call at a time of the MCP row TEMP_MCP
// through rowcall's /mcp (rowcall's fast path, the runner's fast path to
// the direct server, a signed receipt) and, beside it, the same call made
// to the direct server itself: ns/op, allocs/op and B/op are the whole
// process's (client, rowcall and servers), cpu-µs/op its CPU a call, so
// rowcall's share is the difference between the two.
//
//	go test ./internal/app -run xxx -bench MCPRowCall -benchmem -benchtime 2000x -count 3
func BenchmarkMCPRowCall(b *testing.B) {
	m := newMCPBench(b)
	for _, target := range []string{"direct", "rowcall"} {
		b.Run(target, func(b *testing.B) {
			cs, name := connect(b, m.direct.URL), "TEMP"
			if target == "rowcall" {
				cs, name = connect(b, m.rowcall.URL+"/mcp"), "TEMP_MCP"
			}
			for range 50 { // warm up: the pooled session, the row's caches
				callNamed(b, cs, name, nil)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for range b.N {
				callNamed(b, cs, name, nil)
			}
			b.ReportMetric(us(cpuTime()-cpu)/float64(b.N), "cpu-µs/op")
		})
	}
}
