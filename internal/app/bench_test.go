package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/testenv"
)

// BenchmarkWrite is a row write through the API with embeddings off and on
// (the embedded encoder, its queue running as on a host): POST creates a row
// (on: its answer waits for the new row's embedding, for similar_rows), PUT
// changes a row's text (the same), POST ?similar=0 does not wait, PATCH changes a column that is not
// embedded text (no embedding waited for; the queue has nothing to do).
//
//	go test ./internal/app -run xxx -bench Write -benchtime 200x -count 3
func BenchmarkWrite(b *testing.B) {
	for _, mode := range []string{"off", "on"} {
		b.Run(mode, func(b *testing.B) {
			var emb rowcall.Embedder
			if mode == "on" {
				dir, err := use.DefaultDir()
				if err != nil || !use.Fetched(dir, use.Registry) {
					b.Skip("no USE-lite weights (go run ./internal/embed/use/fetch)")
				}
				enc, err := use.Load(dir)
				if err != nil {
					b.Fatal(err)
				}
				emb = use.Embedder{Enc: enc}
			}
			signer, _ := testenv.Signer(b)
			a, err := app.New(app.ReadSettings(func(string) string { return "" }), app.Platform{DB: testdb.Open(b), Signer: signer,
				OwnerKeys: func() []string { return []string{"owner"} }, Embedder: emb,
				Client: func(p outbound.Policy, t time.Duration) *http.Client { return p.Client(t) }})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(a.Close)
			ctx, cancel := context.WithCancel(context.Background())
			b.Cleanup(cancel)
			go a.Run(ctx)
			do := func(method, path, body string, want int) {
				r := httptest.NewRequest(method, path, strings.NewReader(body))
				r.Header.Set("x-terminal-key", "owner")
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				a.Handler.ServeHTTP(w, r)
				if w.Code != want {
					b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
				}
			}
			row := func(key string, i int) string {
				return fmt.Sprintf(`{"key":%q,"type":"fn","target":"echo","content":"# WHAT: Look up order %d of a customer in the shop and show its lines.\n# WHEN_TO_USE: someone asks where their order %d is.\n# ARGS: $1=order"}`, key, i, i)
			}
			do("POST", "/api/directory", row("BENCH_ROW", 0), 201)
			var written atomic.Int64
			b.Run("post", func(b *testing.B) {
				for i := range b.N {
					do("POST", "/api/directory", row(fmt.Sprintf("BENCH_%d", written.Add(1)), i), 201)
				}
			})
			b.Run("post-similar0", func(b *testing.B) {
				for i := range b.N {
					do("POST", "/api/directory?similar=0", row(fmt.Sprintf("BENCH_%d", written.Add(1)), i), 201)
				}
			})
			b.Run("put", func(b *testing.B) {
				for i := range b.N {
					do("PUT", "/api/directory/BENCH_ROW", row("BENCH_ROW", i+1), 200)
				}
			})
			b.Run("patch", func(b *testing.B) {
				for i := range b.N {
					do("PATCH", "/api/directory/BENCH_ROW", fmt.Sprintf(`{"planner_rank":%d}`, i%1000), 200)
				}
			})
		})
	}
}
