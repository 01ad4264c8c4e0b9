package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/internal/rowgen"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// BenchmarkMCPDirectorySize is one /mcp tools/call at a time of the fn row
// ECHO by its tool name, on a host whose directory holds 10 rows and on one
// that holds 10,000, over a session (2025-11-25) and over the per-request
// protocol (2026-07-28: no session, each request its own server): ns/op and
// cpu-µs/op (the process's CPU a call, client and host together) should not
// grow with the directory. ECHO is pinned first, so it is listed either way.
//
//	go test ./internal/app -run xxx -bench MCPDirectorySize -benchtime 2000x -count 3
func BenchmarkMCPDirectorySize(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			url := newFnHost(b, n)
			for _, proto := range []string{"session", "stateless"} {
				b.Run(proto, func(b *testing.B) {
					opts := &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
					if proto == "stateless" {
						opts = nil // the client's newest protocol: per request
					}
					c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
					cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp",
						HTTPClient: &http.Client{Transport: keyTransport{}}, DisableStandaloneSSE: true, MaxRetries: -1}, opts)
					if err != nil {
						b.Fatal(err)
					}
					defer cs.Close()
					call := func() {
						res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ECHO", Arguments: map[string]any{"args": "hello"}})
						if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "hello" {
							b.Fatalf("tools/call: %v %v", res, err)
						}
					}
					for range 50 { // warm up: the pooled connection, the row's caches
						call()
					}
					b.ReportAllocs()
					b.ResetTimer()
					cpu := cpuTime()
					for range b.N {
						call()
					}
					b.ReportMetric(us(cpuTime()-cpu)/float64(b.N), "cpu-µs/op")
				})
			}
		})
	}
}

// newFnHost serves a host's API (the compiled fn runner, as the local host
// wires it) over a fresh SQLite file whose directory holds n rows: the fn
// row ECHO, pinned first, and n-1 generated http rows. It returns its URL.
func newFnHost(b *testing.B, n int) string {
	b.Helper()
	db := testdb.Open(b)
	runner, reg := echoModule(b, db)
	signer, _ := testenv.Signer(b)
	settings := app.ReadSettings(func(string) string { return "" })
	settings.NoExamples = true
	a, err := app.New(settings, app.Platform{DB: db, MaxParams: sqlite.MaxParams, Signer: signer, Fresh: time.Millisecond,
		OwnerKeys: func() []string { return []string{"owner"} }, Fn: runner, Modules: reg,
		Client: func(p outbound.Policy, t time.Duration) *http.Client { return p.Client(t) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Close)
	srv := httptest.NewServer(a.Handler)
	b.Cleanup(srv.Close)
	first := int64(1)
	echoRow := rowcall.NewRow("ECHO", "fn")
	echoRow.Target, echoRow.Content, echoRow.Seq = "echo", "# WHAT: echo\n[\"$1+\"]", &first
	rows := append([]rowcall.Row{echoRow}, rowgen.Noise(n-1, 7)...)
	for start := 0; start < len(rows); start += 1000 {
		body, err := json.Marshal(map[string]any{"rows": rows[start:min(start+1000, len(rows))]})
		if err != nil {
			b.Fatal(err)
		}
		post(b, srv.URL+"/api/import", string(body), 200)
	}
	return srv.URL
}
