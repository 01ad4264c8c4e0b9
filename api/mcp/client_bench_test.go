package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSDKClientAnswer is what the Go SDK's own client spends on one
// tools/call answer, by the answer's form: one server-sent event (what this
// handler wrote before commit 1dd244d) or one JSON message (what it writes now),
// rowcall's result or a bare text block. The server is a fixed answer, so
// the time, CPU (the process's: the fixed server's share is small and the
// same for every form) and allocations are the client's (and net/http's):
//
//	go test ./api/mcp -run xxx -bench SDKClientAnswer -benchmem -count 5
func BenchmarkSDKClientAnswer(b *testing.B) {
	const rowcallResult = `{"_meta":{"rowcall/call":{"contract_sha256":"d5e3ecf42cf859836d1e7b2cfe151a56a7816956a39b496965d32c354434b57e","invocation_id":"inv_mx551kskkuhueai3","key":"TEMP","ok":true,"public_receipt":"http://127.0.0.1:24855/receipt/inv_mx551kskkuhueai3","ran":true,"trace":"t_mx551kskenr79g"}},"content":[{"type":"text","text":"HTTP 200:{\"temperature_2m\":15.7,\"q\":\"latitude=1\u0026longitude=2\"}"},{"type":"text","text":"receipt inv_mx551kskkuhueai3 (ok): http://127.0.0.1:24855/receipt/inv_mx551kskkuhueai3 — verify with GET /api/dispatch?confirm=inv_mx551kskkuhueai3"}]}`
	const bareResult = `{"content":[{"type":"text","text":"{\"temperature_2m\":15.7,\"q\":\"latitude=1\u0026longitude=2\"}"}]}`
	for _, form := range []struct {
		name   string
		sse    bool
		result string
	}{
		{"event/rowcall", true, rowcallResult},
		{"json/rowcall", false, rowcallResult},
		{"event/bare", true, bareResult},
		{"json/bare", false, bareResult},
	} {
		b.Run(form.name, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				msg := string(body)
				var result string
				switch {
				case strings.Contains(msg, `"method":"initialize"`):
					w.Header().Set("Mcp-Session-Id", "S")
					result = `{"capabilities":{"tools":{}},"protocolVersion":"2025-11-25","serverInfo":{"name":"fixed","version":"1"}}`
				case strings.Contains(msg, `"method":"tools/call"`):
					result = form.result
				case strings.Contains(msg, `"method":"server/discover"`): // as an older server answers it
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`)
					return
				default:
					w.WriteHeader(http.StatusAccepted)
					return
				}
				id := msg[strings.Index(msg, `"id":`)+5:]
				id = id[:strings.IndexAny(id, ",}")]
				answer := `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`
				w.Header().Set("Cache-Control", "no-cache, no-transform")
				if form.sse {
					w.Header().Set("Content-Type", "text/event-stream")
					w.Header().Set("Connection", "keep-alive")
					answer = "event: message\ndata: " + answer + "\n\n"
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				io.WriteString(w, answer)
			}))
			defer srv.Close()
			client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL,
				DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &sdk.CallToolParams{Name: "TEMP", Arguments: map[string]any{"args": "1|2"}}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for range b.N {
				if res, err := cs.CallTool(context.Background(), params); err != nil || len(res.Content) == 0 {
					b.Fatal(res, err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the CPU this process has used (user and system).
func cpuTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
