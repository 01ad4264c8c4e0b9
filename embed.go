package rowcall

import (
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
)

// Finding rows by meaning: an Embedder turns text into vectors of one model,
// a VectorIndex finds the rows nearest a vector. Both have one adapter per
// platform (the embedded encoder, an OpenAI-compatible server or Workers AI;
// vectors in the database or Vectorize); the hybrid ranker over them lives in
// one place for every host.

// EmbedModel names the vectors an Embedder makes. Vectors are stored and
// ranked per model: two models' vectors never meet in one ranking, and
// changing the model re-embeds.
type EmbedModel struct {
	Provider string // "use-lite", "openai", "workers-ai"
	Name     string // "use-lite-0.2.0", "text-embedding-3-small", "@cf/baai/bge-base-en-v1.5"
	Dim      int    // every vector's length
}

// ID is the model's stable name in storage: provider/name/dim.
func (m EmbedModel) ID() string { return m.Provider + "/" + m.Name + "/" + strconv.Itoa(m.Dim) }

// Embedder embeds texts with one model. Vectors are L2-normalised, so a dot
// product is the cosine.
type Embedder interface {
	Model() EmbedModel
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Vector is one row's embedding, with what a vector index filters on.
type Vector struct {
	Key      string
	TextHash [32]byte // EmbedHash of the text embedded: a changed row re-embeds
	// Version is the row's version whose text was embedded: a vector index
	// that can (the vectors table) stores the vector only while the row is
	// at that version, so an embedding of older text that ends late never
	// replaces the newer text's vector. 0: stored whatever the version.
	Version  int64
	Values   []float32 // L2-normalised, len EmbedModel.Dim
	Category string
	Enabled  bool
	Visible  bool // planner_visible
}

// VectorHit is one row near a query vector.
type VectorHit struct {
	Key    string
	Cosine float64
}

// VectorIndex stores rows' vectors of one model and finds the nearest.
type VectorIndex interface {
	Upsert(ctx context.Context, m EmbedModel, vs []Vector) error
	Delete(ctx context.Context, m EmbedModel, keys []string) error
	// Nearest returns up to k rows by cosine with q, best first, among
	// those f passes: f is applied while the index is searched, so a
	// caller gets its own best k however many rows it may not see rank
	// above them.
	Nearest(ctx context.Context, m EmbedModel, q []float32, k int, f VectorFilter) ([]VectorHit, error)
}

// VectorFilter is which rows a VectorIndex's Nearest may return: enabled and
// planner-visible unless All, in Scope (nil: every row; Scope.Holds), and
// not Except (a row's own key, for its neighbours).
type VectorFilter struct {
	All    bool
	Scope  *Scope
	Except string
}

// Passes reports whether the row key of category, enabled and planner-visible
// as live says, passes f.
func (f VectorFilter) Passes(key, category string, live bool) bool {
	return (f.All || live) && key != f.Except && f.Scope.Holds(key, category)
}

// PendingVector is a written row's vector on its way, for the write's
// near-duplicate check (the API's similar_rows and a row's neighbour list;
// internal/vectors.Pending is the one every host makes). Vector waits for
// it, or for ctx's end. Keep, which the caller must call once the write
// ended, stores it for committed, the row as the write left it (nil: the
// write failed, nothing is stored), and returns a channel closed once that
// is done. Reused reports, once Vector returned, that the vector is the one
// stored for the row's key before the write (its text is unchanged: its
// near rows were reported to the text's first write). Embeds reports
// whether r embeds the text the vector is of.
type PendingVector interface {
	Vector(ctx context.Context) ([]float32, error)
	Keep(committed *Row) <-chan struct{}
	Reused() bool
	Embeds(r *Row) bool
}

// NearDuplicate is the cosine at or above which a row written is reported
// as near another (the API's similar_rows), chosen on the dev set's rows
// (docs/benchmarks.md, "Ask").
const NearDuplicate = 0.88

// Reranker reorders a ranking's best candidates by a model (the agent row
// an operator names in ROWCALL_ASK_RERANK); off unless configured. The
// rerank is a call made for who asked (internal/rerank says how it is
// charged and when it is refused); a refused rerank returns hits unchanged
// and no error.
type Reranker interface {
	Rerank(ctx context.Context, query string, hits []Hit, who Asker) ([]Hit, error)
}

// InBackground marks ctx as background work (the embedding queue's): an
// Embedder that can spread one call over several cores (the embedded
// encoder) keeps a background call on one, so a host's writes and asks keep
// the other cores while it embeds a directory.
func InBackground(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// Background reports whether ctx is marked by InBackground.
func Background(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

type backgroundKey struct{}

// OnOneCore marks ctx for a call that runs beside other work of the same
// request (ask embeds the query while the word search runs): an Embedder
// that can spread one call over several cores keeps it on one, so the two
// overlap instead of taking turns at every core.
func OnOneCore(ctx context.Context) context.Context {
	return context.WithValue(ctx, oneCoreKey{}, true)
}

// Cores is how many cores a call on ctx may spread one piece of work over:
// 1 when ctx is marked by OnOneCore or InBackground, else 0 (as many as
// GOMAXPROCS). The embedded encoder and the in-memory vector scan take it.
func Cores(ctx context.Context) int {
	if b, _ := ctx.Value(oneCoreKey{}).(bool); b || Background(ctx) {
		return 1
	}
	return 0
}

type oneCoreKey struct{}

// EmbedText is the text a row is embedded from: its "# WHAT:" and
// "# WHEN_TO_USE:" lines without their labels, joined by a space (chosen on
// the dev set's tune split; docs/benchmarks.md). A row without them is
// embedded from its description.
func EmbedText(r *Row) string {
	var parts []string
	for _, line := range strings.Split(r.Content, "\n") {
		line = strings.TrimSpace(line)
		for _, label := range []string{"# WHAT:", "# WHEN_TO_USE:"} {
			if rest, ok := strings.CutPrefix(line, label); ok {
				parts = append(parts, strings.TrimSpace(rest))
			}
		}
	}
	if len(parts) == 0 {
		return r.Description()
	}
	return strings.Join(parts, " ")
}

// EmbedHash is the SHA-256 of the model's ID and the text: a stored vector is
// current while its hash equals EmbedHash of the row's EmbedText.
func EmbedHash(m EmbedModel, text string) [32]byte {
	return sha256.Sum256([]byte(m.ID() + "\x00" + text))
}
