package app_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/vectors"
)

// watched is an embedder whose every call is seen: the texts, whether the
// call was background work (rowcall.Background), and, when gate is set,
// it waits for gate before answering. Every text embeds to [1], so every row
// is a near copy of every other.
type watched struct {
	mu    sync.Mutex
	calls []call
	seen  chan call     // each call, when not nil (never blocks)
	gate  chan struct{} // closed to let calls answer; nil: at once
}

type call struct {
	texts      []string
	background bool
}

func (*watched) Model() rowcall.EmbedModel {
	return rowcall.EmbedModel{Provider: "use-lite", Name: "watched", Dim: 1}
}

func (w *watched) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c := call{texts, rowcall.Background(ctx)}
	w.mu.Lock()
	w.calls = append(w.calls, c)
	w.mu.Unlock()
	if w.seen != nil {
		select {
		case w.seen <- c:
		default:
		}
	}
	if w.gate != nil {
		<-w.gate
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1}
	}
	return out, nil
}

// embedded returns how many calls embedded text, and how many of those were
// background work.
func (w *watched) embedded(text string) (n, background int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.calls {
		for _, t := range c.texts {
			if t == text {
				n++
				if c.background {
					background++
				}
			}
		}
	}
	return n, background
}

func write(t *testing.T, a *app.App, method, path, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer owner")
	r.Header.Set("Content-Type", "application/json")
	a.Handler.ServeHTTP(rec, r)
	var m map[string]any
	json.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, m
}

// waitVector waits until key's stored vector embeds text.
func waitVector(t *testing.T, a *app.App, m rowcall.EmbedModel, key, text string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		vs, err := a.Store.Vectors(context.Background(), m, []string{key})
		if err == nil && len(vs) == 1 && vs[0].TextHash == rowcall.EmbedHash(m, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no vector of %q stored (%v, %d)", key, text, err, len(vs))
		}
	}
}

const (
	rowA  = `{"key":"ROW_A","type":"fn","target":"echo","content":"# WHAT: Refund a card charge.\n# WHEN_TO_USE: a customer is owed money"}`
	textA = "Refund a card charge. a customer is owed money"
)

// One mechanism embeds rows: a POST that waits for similar_rows embeds its
// row once, in the foreground, and stores it, so the queue's pass after the
// write embeds nothing; a PUT that leaves the embedded text as it was embeds
// nothing and looks nothing up (its answer carries no similar_rows: the
// text's first write was told), one of new text is checked again; a write
// with ?similar=0 is embedded by the queue, as background work
// (rowcall.InBackground: the embedded encoder on one core, on the
// low-priority thread).
func TestWriteEmbedsOnce(t *testing.T) {
	w := &watched{}
	a := newApp(t, nil, app.Platform{Embedder: w})
	run(t, a)
	m := w.Model()

	if code, got := write(t, a, "POST", "/api/directory?similar=0", `{"key":"ROW_OLD","type":"fn","target":"echo","content":"# WHAT: Pay a customer back."}`); code != 201 || got["similar_rows"] != nil {
		t.Fatalf("POST ?similar=0: %d %v", code, got)
	}
	waitVector(t, a, m, "ROW_OLD", "Pay a customer back.")
	if n, bg := w.embedded("Pay a customer back."); n != 1 || bg != 1 {
		t.Fatalf("a row written with ?similar=0: embedded %d times, %d of them as background work; want once, by the queue", n, bg)
	}

	code, got := write(t, a, "POST", "/api/directory", rowA)
	if sim, _ := got["similar_rows"].([]any); code != 201 || len(sim) != 1 || sim[0].(map[string]any)["key"] != "ROW_OLD" {
		t.Fatalf("POST: %d %v", code, got)
	}
	waitVector(t, a, m, "ROW_A", textA)
	if err := a.Indexer.Pass(context.Background()); err != nil { // what the queue does after the write
		t.Fatal(err)
	}
	if n, bg := w.embedded(textA); n != 1 || bg != 0 {
		t.Fatalf("a POSTed row: embedded %d times (%d by the queue); want once, for its answer", n, bg)
	}

	w.mu.Lock()
	calls := len(w.calls)
	w.mu.Unlock()
	code, got = write(t, a, "PUT", "/api/directory/ROW_A", strings.Replace(rowA, `"echo"`, `"echo","planner_rank":7`, 1))
	if code != 200 || got["similar_rows"] != nil || got["similar_pending"] != nil || got["version"] == nil {
		t.Fatalf("PUT, same text: %d %v", code, got)
	}
	if err := a.Indexer.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	more := w.calls[calls:]
	w.mu.Unlock()
	if len(more) != 0 {
		t.Fatalf("a PUT that leaves the embedded text as it was embedded %v", more)
	}
	// A PUT of new text is checked again, and embedded once.
	code, got = write(t, a, "PUT", "/api/directory/ROW_A", strings.Replace(rowA, "card charge", "card payment", 1))
	if sim, _ := got["similar_rows"].([]any); code != 200 || len(sim) != 1 || sim[0].(map[string]any)["key"] != "ROW_OLD" {
		t.Fatalf("PUT, new text: %d %v", code, got)
	}
	if n, _ := w.embedded(strings.Replace(textA, "card charge", "card payment", 1)); n != 1 {
		t.Fatalf("a PUT of new text: embedded %d times, want once", n)
	}
}

// A POST's embedding runs beside its write, not after it: while the
// database's writer lock is held elsewhere (so the row cannot commit), the
// row's text is already being embedded; once the lock is let go the answer
// carries similar_rows.
func TestWriteEmbedsBesideCommit(t *testing.T) {
	w := &watched{seen: make(chan call, 8)}
	a := newApp(t, nil, app.Platform{Embedder: w})
	if code, _ := write(t, a, "POST", "/api/directory", `{"key":"ROW_OLD","type":"fn","target":"echo","content":"# WHAT: Pay a customer back."}`); code != 201 {
		t.Fatal(code)
	}
	<-w.seen
	ctx := context.Background()
	conn, err := a.Store.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil { // the writer lock
		t.Fatal(err)
	}
	answered := make(chan map[string]any)
	go func() { _, got := write(t, a, "POST", "/api/directory", rowA); answered <- got }()
	select {
	case c := <-w.seen:
		if len(c.texts) != 1 || c.texts[0] != textA {
			t.Fatalf("embedded %v", c.texts)
		}
	case <-time.After(5 * time.Second):
		conn.ExecContext(ctx, "ROLLBACK")
		<-answered
		t.Fatal("the row was not embedded while its write waited for the database")
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if got := <-answered; got["similar_rows"] == nil {
		t.Fatalf("POST: %v", got)
	}
}

// A write whose row is not embedded within the answer's bounded wait is
// acknowledged with similar_pending, the address that lists the row's near
// rows once its vector is made; the vector is still stored then.
func TestWriteSimilarPending(t *testing.T) {
	w := &watched{gate: make(chan struct{})}
	a := newApp(t, nil, app.Platform{Embedder: w})
	code, got := write(t, a, "POST", "/api/directory", rowA)
	if code != 201 || got["similar_pending"] != "/api/directory/ROW_A/similar" || got["similar_rows"] != nil || got["key"] != "ROW_A" {
		t.Fatalf("POST with the embedder stalled: %d %v", code, got)
	}
	close(w.gate)
	waitVector(t, a, w.Model(), "ROW_A", textA)
}

// heldLook is the host's vector index (vectors.Table) whose first look at
// one key's stored vector (Hasher.Vector) waits until let is closed: the
// write's own look at its row, held back as a busy machine may hold back
// the goroutine that makes it.
type heldLook struct {
	*vectors.Table
	key  string
	once sync.Once
	held chan struct{} // closed when that look waits
	let  chan struct{}
}

func (l *heldLook) Vector(ctx context.Context, m rowcall.EmbedModel, key string) ([]float32, [32]byte, bool) {
	if key == l.key {
		l.once.Do(func() { close(l.held); <-l.let })
	}
	return l.Table.Vector(ctx, m, key)
}

// A POSTed copy is flagged even when the queue embeds the committed row
// before the write's own look at its vector (CI's flake of
// TestHosts/embedded/meaning): that vector is of the row's new text, no sign
// that the text was there before, so the near rows are still looked up.
func TestWriteFlaggedWhenTheQueueEmbedsFirst(t *testing.T) {
	w := &watched{}
	l := &heldLook{Table: vectors.NewTable(nil, 0), key: "ROW_A", held: make(chan struct{}), let: make(chan struct{})}
	a := newApp(t, nil, app.Platform{Embedder: w, Vectors: l})
	l.Table.Store = a.Store
	run(t, a)
	m := w.Model()

	if code, _ := write(t, a, "POST", "/api/directory?similar=0", `{"key":"ROW_OLD","type":"fn","target":"echo","content":"# WHAT: Pay a customer back."}`); code != 201 {
		t.Fatal(code)
	}
	waitVector(t, a, m, "ROW_OLD", "Pay a customer back.")
	answered := make(chan map[string]any)
	go func() { _, got := write(t, a, "POST", "/api/directory", rowA); answered <- got }()
	select {
	case <-l.held:
	case got := <-answered:
		t.Fatalf("the write never looked for its row's vector: %v", got)
	}
	waitVector(t, a, m, "ROW_A", textA) // the queue's pass after the commit embedded it
	close(l.let)
	got := <-answered
	if sim, _ := got["similar_rows"].([]any); len(sim) != 1 || sim[0].(map[string]any)["key"] != "ROW_OLD" {
		t.Fatalf("a copy whose vector the queue made first is not flagged: %v", got)
	}
}

// run starts a's background work (the embedding queue) until the test ends.
func run(t *testing.T, a *app.App) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}
