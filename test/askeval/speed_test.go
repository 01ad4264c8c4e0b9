package askeval

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/dot"
)

// int8Vectors is VectorSearch over int8 codes of the same vectors
// (dot.Int8): what an index that stores a quarter of the bytes would rank.
type int8Vectors struct {
	Enc   Embedder
	Index *Index
	Codes *dot.Int8
}

func quantised(ix *Index) *dot.Int8 {
	x := &dot.Int8{Dim: ix.Dim}
	for i := range ix.Keys {
		x.Append(ix.Vecs[i*ix.Dim : (i+1)*ix.Dim])
	}
	return x
}

func (v int8Vectors) Rank(_ context.Context, query string) ([]string, error) {
	cos := make([]float32, v.Codes.Len())
	v.Codes.Scores(v.Enc.Embed(query), cos)
	var keys []string
	for _, i := range top(cos, Depth) {
		keys = append(keys, v.Index.Keys[i])
	}
	return keys, nil
}

// TestInt8KeepsRanking: ranking by int8 codes of the row vectors (dot.Int8)
// scores the dev set as float32 vectors do (the tune split decides; top-1
// and MRR may not drop by more than 0.01), at 10,000 distractors, for vectors
// alone and for the chosen hybrid.
//
//	ROWCALL_ASKEVAL=1 go test ./test/askeval -run TestInt8KeepsRanking -v
func TestInt8KeepsRanking(t *testing.T) {
	h := hybridAt10k(t)
	codes := quantised(h.Index)
	rankers := []struct {
		name      string
		f32, int8 Ranker
	}{
		{"vectors", VectorSearch{Enc: h.Enc, Index: h.Index}, int8Vectors{Enc: h.Enc, Index: h.Index, Codes: codes}},
		{"hybrid", h, int8Hybrid{h, codes}},
	}
	for _, r := range rankers {
		for _, split := range []string{Tune, Test} {
			var intents []Intent
			for _, in := range Intents() {
				if in.Split == split {
					intents = append(intents, in)
				}
			}
			measure := func(rk Ranker) Figures {
				res, err := Run(context.Background(), rk, intents)
				if err != nil {
					t.Fatal(err)
				}
				return Measure(res, func(Intent) bool { return true })
			}
			a, b := measure(r.f32), measure(r.int8)
			t.Logf("%s %s: float32 top-1 %.3f top-3 %.3f MRR %.3f; int8 top-1 %.3f top-3 %.3f MRR %.3f",
				r.name, split, a.Top1, a.Top3, a.MRR, b.Top1, b.Top3, b.MRR)
			if split == Tune && (b.Top1 < a.Top1-0.01 || b.MRR < a.MRR-0.01) {
				t.Errorf("%s on tune: int8 top-1 %.3f MRR %.3f, float32 %.3f %.3f", r.name, b.Top1, b.MRR, a.Top1, a.MRR)
			}
		}
	}
}

// int8Hybrid is Hybrid with the cosines from int8 codes.
type int8Hybrid struct {
	Hybrid
	Codes *dot.Int8
}

func (h int8Hybrid) Rank(ctx context.Context, query string) ([]string, error) {
	hits, err := h.Store.Search(ctx, query, rowcall.SearchFilter{Limit: h.K})
	if err != nil {
		return nil, err
	}
	cos := make([]float32, h.Codes.Len())
	h.Codes.Scores(h.Enc.Embed(query), cos)
	return Fuse(hits, h.Index, cos, h.Weight, h.K), nil
}

// BenchmarkHybridAskKernels is BenchmarkHybridAsk's ask four ways in one
// run: "loop" is Hybrid.Rank as it is (the plain-Go cosine loop, then the
// word search); "kernel" scores with dot.Scores; "int8" scores int8 codes
// (dot.Int8); "int8-concurrent" also runs the word search at the same time
// as the query's embedding and the scan (they share nothing). The keys are
// the same (int8: TestInt8KeepsRanking). p50/p99 over the 240 intents in
// turn.
//
//	ROWCALL_ASKEVAL=1 go test ./test/askeval -run xxx -bench HybridAskKernels -benchtime 480x
func BenchmarkHybridAskKernels(b *testing.B) {
	h := hybridAt10k(b)
	codes := quantised(h.Index)
	ctx := context.Background()
	kernel := func(query string) ([]string, error) {
		hits, err := h.Store.Search(ctx, query, rowcall.SearchFilter{Limit: h.K})
		if err != nil {
			return nil, err
		}
		cos := make([]float32, len(h.Index.Keys))
		dot.Scores(h.Enc.Embed(query), h.Index.Vecs, h.Index.Dim, cos)
		return Fuse(hits, h.Index, cos, h.Weight, h.K), nil
	}
	concurrent := func(query string) ([]string, error) {
		type words struct {
			hits []rowcall.Hit
			err  error
		}
		ch := make(chan words, 1)
		go func() {
			hits, err := h.Store.Search(ctx, query, rowcall.SearchFilter{Limit: h.K})
			ch <- words{hits, err}
		}()
		cos := make([]float32, codes.Len())
		codes.Scores(h.Enc.Embed(query), cos)
		w := <-ch
		if w.err != nil {
			return nil, w.err
		}
		return Fuse(w.hits, h.Index, cos, h.Weight, h.K), nil
	}
	intents := Intents()
	for _, v := range []struct {
		name string
		rank func(string) ([]string, error)
	}{
		{"loop", func(q string) ([]string, error) { return h.Rank(ctx, q) }},
		{"kernel", kernel},
		{"int8", func(q string) ([]string, error) { return int8Hybrid{h, codes}.Rank(ctx, q) }},
		{"int8-concurrent", concurrent},
	} {
		b.Run(v.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := v.rank(intents[i%len(intents)].Text); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			q := func(p float64) float64 { return float64(times[int(p*float64(len(times)-1))]) / 1e6 }
			b.ReportMetric(q(0.50), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
		})
	}
}
