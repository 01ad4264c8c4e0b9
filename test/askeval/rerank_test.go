package askeval

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/test/embedserver"
)

// hashWords is a stand-in encoder for the rerank path's test: hashed words,
// normalised (the dev set's figures use USE-lite).
type hashWords struct{}

func (hashWords) Embed(text string) []float32 { return hashWords{}.EmbedBatch([]string{text})[0] }
func (hashWords) EmbedBatch(texts []string) [][]float32 {
	vs := embedserver.Words(use.Dim)(texts)
	for _, v := range vs {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(ss))
		}
	}
	return vs
}

// The rerank ranker's answer is the stand-in model's order of hybrid's
// candidates (reached through the rerank row, the dispatcher and the
// agent runner): its first key is the candidate whose line is nearest the
// question, and no rerank failed.
func TestReranked(t *testing.T) {
	ctx := context.Background()
	rows := Targets()[:30]
	store, db, err := NewStore(ctx, t.TempDir(), rows)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = EmbedText(r, false)
	}
	vs := make([]rowcall.Vector, len(rows))
	for i, v := range (hashWords{}).EmbedBatch(texts) {
		vs[i] = rowcall.Vector{Key: rows[i].Key, Values: v, Category: rows[i].Category, Enabled: true, Visible: true}
	}
	ix := vectors.NewMemory()
	if err := ix.Upsert(ctx, use.Model, vs); err != nil {
		t.Fatal(err)
	}
	h := Hybrid{Store: store, Enc: hashWords{}, Index: ix, Weight: ChosenWeight, K: ChosenK}
	r, stop, err := NewReranked(ctx, h, rows, "line", 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	moved := 0
	for _, in := range Intents()[:60] {
		q := in.Text
		got, err := r.Rank(ctx, q)
		if err != nil || r.Failures != 0 || len(got) != Depth {
			t.Fatalf("rank %q: %v, %d failures, %d keys", q, err, r.Failures, len(got))
		}
		before, _ := h.Rank(ctx, q)
		qv, best, bestKey := hashWords{}.Embed(q), -2.0, ""
		cands, _ := h.Ranker().Search(ctx, q, rowcall.SearchFilter{Limit: vectors.RerankDepth})
		for _, c := range cands {
			k := c.Row.Key
			row := r.Rows[k]
			line := strings.ToLower(strings.ReplaceAll(k, "_", " ")) + ": " + row.Description()
			if when := row.DocLine("WHEN_TO_USE"); when != "" {
				line += " Use when: " + when
			}
			if c := dot(qv, hashWords{}.Embed(line)); c > best {
				best, bestKey = c, k
			}
		}
		if got[0] != bestKey {
			t.Fatalf("%q: reranked first %s, want %s (hybrid's order %v)", q, got[0], bestKey, before)
		}
		if before[0] != bestKey {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("the stand-in never moved hybrid's first: the test shows nothing")
	}
	t.Logf("the rerank changed the first key of %d of 60 intents", moved)
}
