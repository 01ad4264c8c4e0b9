package app_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/learn"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/internal/rerank"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/test/embedserver"
	"github.com/rowcall/rowcall/test/modelserver"
)

const (
	embedKey = "sk-app-embed-8d31c0f7a2"
	modelKey = "sk-app-model-41be9d0c6f"
)

// newApp assembles the core as the local host does (its outbound policy's
// client, its environment for credentials) with the settings env gives.
func newApp(t *testing.T, env map[string]string, p app.Platform) *app.App {
	t.Helper()
	signer, _ := testenv.Signer(t)
	p.DB, p.Signer = testdb.Open(t), signer
	p.OwnerKeys = func() []string { return []string{"owner"} }
	p.Env = rowcall.EnvFunc(func(n string) (string, bool) {
		v, ok := map[string]string{"EMB_KEY": embedKey, "MODEL_KEY": modelKey}[n]
		return v, ok
	})
	p.Client = func(policy outbound.Policy, timeout time.Duration) *http.Client { return policy.Client(timeout) }
	a, err := app.New(app.ReadSettings(func(n string) string { return env[n] }), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// A host configured with ROWCALL_EMBED_PROVIDER embeds through that model
// provider's /v1/embeddings: the row's text arrives with the configured model
// and credential, through the outbound policy that lets model providers on
// loopback through (and nothing else: ROWCALL_ALLOW_OUTBOUND is unset).
func TestEmbedProviderSetting(t *testing.T) {
	s := embedserver.Start(t, nil)
	s.Key = embedKey
	a := newApp(t, map[string]string{"ROWCALL_MODEL_PROVIDERS": "emb=" + s.URL, "ROWCALL_EMBED_PROVIDER": "emb",
		"ROWCALL_EMBED_MODEL": "nomic-embed-text", "ROWCALL_EMBED_AUTH": "bearer:EMB_KEY"}, app.Platform{})
	row := rowcall.Row{Key: "STRIPE_REFUND_CHARGE", Content: "# WHAT: Refund a card charge.\n# WHEN_TO_USE: a customer is owed money back\n# ARGS: charge id"}
	vs, err := a.Embedder.Embed(context.Background(), []string{rowcall.EmbedText(&row)})
	if err != nil {
		t.Fatal(err)
	}
	if m := a.Embedder.Model(); len(vs) != 1 || m != (rowcall.EmbedModel{Provider: "openai", Name: "nomic-embed-text", Dim: 64}) {
		t.Fatalf("%d vectors, model %+v", len(vs), m)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Model != "nomic-embed-text" || reqs[0].Header.Get("Authorization") != "Bearer "+embedKey ||
		!slices.Equal(reqs[0].Input, []string{"Refund a card charge. a customer is owed money back"}) {
		t.Fatalf("requests %+v", reqs)
	}
}

type fixed struct{}

func (fixed) Model() rowcall.EmbedModel {
	return rowcall.EmbedModel{Provider: "use-lite", Name: "x", Dim: 1}
}
func (fixed) Embed(context.Context, []string) ([][]float32, error) {
	return [][]float32{{1}}, nil
}

// ROWCALL_EMBED_PROVIDER unset or use-lite keeps the platform's embedder,
// off keeps none, and a name that is no model provider or a bad dimension
// stops the start with the setting to fix.
func TestEmbedProviderChoices(t *testing.T) {
	for v, want := range map[string]rowcall.Embedder{"": fixed{}, "use-lite": fixed{}, "off": nil} {
		a := newApp(t, map[string]string{"ROWCALL_EMBED_PROVIDER": v}, app.Platform{Embedder: fixed{}})
		if a.Embedder != want {
			t.Errorf("ROWCALL_EMBED_PROVIDER=%q: embedder %v, want %v", v, a.Embedder, want)
		}
	}
	for _, env := range []map[string]string{
		{"ROWCALL_EMBED_PROVIDER": "nosuch", "ROWCALL_MODEL_PROVIDERS": "emb=http://127.0.0.1:1/v1"},
		{"ROWCALL_EMBED_PROVIDER": "emb", "ROWCALL_MODEL_PROVIDERS": "emb=http://127.0.0.1:1/v1", "ROWCALL_EMBED_MODEL": "m", "ROWCALL_EMBED_DIM": "-3"},
		{"ROWCALL_EMBED_PROVIDER": "emb", "ROWCALL_MODEL_PROVIDERS": "emb=http://127.0.0.1:1/v1"},
		// no Platform.Env (the worker): a credential could not be read
		{"ROWCALL_EMBED_PROVIDER": "emb", "ROWCALL_MODEL_PROVIDERS": "emb=http://127.0.0.1:1/v1", "ROWCALL_EMBED_MODEL": "m", "ROWCALL_EMBED_AUTH": "bearer:EMB_KEY"},
	} {
		signer, _ := testenv.Signer(t)
		_, err := app.New(app.ReadSettings(func(n string) string { return env[n] }), app.Platform{DB: testdb.Open(t), Signer: signer,
			Client: func(p outbound.Policy, d time.Duration) *http.Client { return p.Client(d) }})
		var re *rowcall.Error
		if !errors.As(err, &re) || !strings.Contains(re.Message+re.HowToFix, "ROWCALL_EMBED_") {
			t.Errorf("%v: error %v, want one naming the setting", env, err)
		}
	}
}

// ROWCALL_ASK_RERANK names the row the app's Reranker calls, through the
// app's own dispatcher: the model's order wins and the call has its receipt.
func TestAskRerankSetting(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = modelKey
	a := newApp(t, map[string]string{"ROWCALL_MODEL_PROVIDERS": "local=" + ms.URL, "ROWCALL_ASK_RERANK": "ASK_RERANK"}, app.Platform{})
	if newApp(t, nil, app.Platform{}).Reranker != nil {
		t.Fatal("a reranker without ROWCALL_ASK_RERANK")
	}
	ctx := context.Background()
	if _, err := a.Store.Create(ctx, rowcall.Row{Key: "ASK_RERANK", Type: rowcall.TypeAgent, Target: "rank-model", Auth: "bearer:MODEL_KEY",
		Category: "system", Enabled: 1, Content: "# WHAT: Reorders ask's best candidates\n" + rerank.Prompt}); err != nil {
		t.Fatal(err)
	}
	ms.Script(modelserver.Reply{Content: "B_ROW\nA_ROW"})
	hits := []rowcall.Hit{{Row: rowcall.Row{Key: "A_ROW", Content: "# WHAT: a"}}, {Row: rowcall.Row{Key: "B_ROW", Content: "# WHAT: b"}}}
	got, err := a.Reranker.Rerank(ctx, "which?", hits, rowcall.Asker{Owner: true})
	if err != nil || len(got) != 2 || got[0].Row.Key != "B_ROW" {
		t.Fatalf("rerank: %v, %+v", err, got)
	}
	rs, err := a.Store.Receipts(ctx, 0, 10)
	if err != nil || len(rs) != 1 || rs[0].Key != "ASK_RERANK" || !rs[0].OK || rs[0].Actor != rerank.Actor {
		t.Fatalf("receipts %v %+v", err, rs)
	}
}

// A platform that keeps its vector index current itself (the worker's sync
// into Vectorize) gets no Indexer: one mechanism embeds rows. Ask still ranks
// with its index, and a written row's near duplicates are still found, from
// the row's text embedded and not stored.
func TestPlatformKeepsVectors(t *testing.T) {
	idx := vectors.NewMemory()
	a := newApp(t, nil, app.Platform{Embedder: fixed{}, Vectors: idx, KeepsVectors: true})
	if a.Indexer != nil || a.Ranker.Index != rowcall.VectorIndex(idx) || a.Ranker.Embedder == nil {
		t.Fatalf("KeepsVectors: Indexer %v, ranker index %T", a.Indexer, a.Ranker.Index)
	}
	ctx := context.Background()
	if err := idx.Upsert(ctx, fixed{}.Model(), []rowcall.Vector{{Key: "OLD_ROW", Values: []float32{1}, Enabled: true, Visible: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Directory.Create(ctx, rowcall.Row{Key: "OLD_ROW", Type: rowcall.TypeFn, Target: "echo", Content: "# WHAT: old", Enabled: 1, PlannerVisible: 1}); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/api/directory", strings.NewReader(`{"key":"NEW_ROW","type":"fn","target":"echo","content":"# WHAT: new"}`))
	r.Header.Set("Authorization", "Bearer owner")
	r.Header.Set("Content-Type", "application/json")
	a.Handler.ServeHTTP(rec, r)
	if rec.Code != 201 || !strings.Contains(rec.Body.String(), `"similar_rows":[{"key":"OLD_ROW"`) {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	if _, ok := idx.Vector(fixed{}.Model(), "NEW_ROW"); ok {
		t.Fatal("the core stored a vector the platform keeps")
	}
	if b := newApp(t, nil, app.Platform{Embedder: fixed{}, Vectors: vectors.NewMemory()}); b.Indexer == nil {
		t.Fatal("without KeepsVectors the core has no Indexer")
	}
}

// ROWCALL_ASK_LEARN sets whose use teaches (learn.ParseTeachers); a value it
// does not know stops the app with an error naming the setting.
func TestAskLearnSetting(t *testing.T) {
	a := newApp(t, map[string]string{"ROWCALL_ASK_LEARN": "tokens"}, app.Platform{})
	if a.Learner.Teachers == nil || *a.Learner.Teachers != (learn.Teachers{Tokens: true}) {
		t.Fatalf("ROWCALL_ASK_LEARN=tokens: %+v", a.Learner.Teachers)
	}
	signer, _ := testenv.Signer(t)
	_, err := app.New(app.ReadSettings(func(n string) string { return map[string]string{"ROWCALL_ASK_LEARN": "all"}[n] }),
		app.Platform{DB: testdb.Open(t), Signer: signer, Client: func(p outbound.Policy, d time.Duration) *http.Client { return p.Client(d) }})
	var re *rowcall.Error
	if !errors.As(err, &re) || !strings.HasPrefix(re.Message, `ROWCALL_ASK_LEARN: "all" is not`) || !strings.Contains(re.HowToFix, "off") {
		t.Fatalf("ROWCALL_ASK_LEARN=all: %v", err)
	}
}
