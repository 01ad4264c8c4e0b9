package test

// Finding rows by meaning on the worker, in workerd: the worker's Workers AI
// embedder and Vectorize index (worker/vectors.go) against stand-ins that
// speak the two services' documented shapes (test/standins/worker.mjs),
// bound as AI and VECTORIZE exactly where production binds the services, and
// computing real vectors with rowcall's embedded encoder (USE-lite) through a
// loopback service this test runs.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/rowgen"
)

// standinTexts counts the texts embedService has embedded.
var standinTexts atomic.Int64

// embedService serves POST {"text": [...]} → {"data": [[...], ...]} on
// loopback with the embedded encoder (weights from `make use-lite`),
// counting the texts in standinTexts.
func embedService(t testing.TB) string {
	t.Helper()
	dir, err := use.DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := use.Load(dir)
	if err != nil {
		t.Fatalf("the embedded encoder's weights: %v (run `make use-lite`)", err)
	}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Text []string `json:"text"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		standinTexts.Add(int64(len(in.Text)))
		mu.Lock()
		vs := enc.EmbedBatch(in.Text)
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"data": vs})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// standinConfigs writes the test's two wrangler configurations into a
// temporary directory: the production wrangler.toml with the AI and
// VECTORIZE bindings added as service bindings to the stand-ins, and the
// stand-ins' own.
func standinConfigs(t testing.TB, embedURL string) []string {
	t.Helper()
	cfg := prodConfig(t)
	date := regexp.MustCompile(`(?m)^compatibility_date = ".*"$`).FindString(cfg)
	cfg += `
# The test's stand-ins for Workers AI and Vectorize (test/standins/worker.mjs).
[[services]]
binding = "AI"
service = "rowcall-standins"
entrypoint = "AI"

[[services]]
binding = "VECTORIZE"
service = "rowcall-standins"
entrypoint = "Vectorize"
`
	standins := fmt.Sprintf(`name = "rowcall-standins"
main = %q
%s

[vars]
EMBED_URL = %q
DIMENSIONS = "768"
METADATA_INDEXES = "model,enabled,visible,category"
`, filepath.Join(repoRoot, "test/standins/worker.mjs"), date, embedURL)
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "wrangler.toml"), filepath.Join(dir, "standins.toml")}
	for i, text := range []string{cfg, standins} {
		if err := os.WriteFile(paths[i], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// prodConfig is the production wrangler.toml with its paths made absolute,
// to be written elsewhere.
func prodConfig(t testing.TB) string {
	t.Helper()
	prod, err := os.ReadFile(filepath.Join(repoRoot, "wrangler.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(prod)
	for _, p := range []struct{ old, new string }{
		{`main = "build/out/worker/worker.mjs"`, fmt.Sprintf("main = %q", filepath.Join(repoRoot, "build/out/worker/worker.mjs"))},
		{`migrations_dir = "migrations"`, fmt.Sprintf("migrations_dir = %q", filepath.Join(repoRoot, "migrations"))},
	} {
		if !strings.Contains(cfg, p.old) {
			t.Fatalf("wrangler.toml has no line %s", p.old)
		}
		cfg = strings.Replace(cfg, p.old, p.new, 1)
	}
	return cfg
}

// startWorkerStandins starts the worker with AI and VECTORIZE bound to the
// stand-ins.
func startWorkerStandins(t testing.TB, env []string) *target {
	t.Helper()
	return startWorkerWith(t, env, standinConfigs(t, embedService(t)))
}

// vectorStats is the vectors part of GET /_worker/stats.
type vectorStats struct {
	AI, Vectorize bool
	Model         string
	Sync          struct {
		Cursor, Embedded, Deleted, Failures int64
		LastError                           string `json:"last_error"`
	}
}

func workerVectors(t *testing.T, h *host) vectorStats {
	t.Helper()
	got := h.do(t, req{Method: "GET", Path: "/_worker/stats"})
	expect(t, got, 200, nil)
	var s struct{ Vectors vectorStats }
	if err := json.Unmarshal(got.Raw, &s); err != nil {
		t.Fatal(err)
	}
	return s.Vectors
}

// synced waits until the sync after the writes so far is done: the event
// log's end is the cursor (the sync runs after each write's answer).
func synced(t *testing.T, h *host, tg *target) vectorStats {
	t.Helper()
	var last int64
	if err := tg.DB(t).QueryRow(`SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := workerVectors(t, h)
		if s.Sync.LastError != "" {
			t.Fatalf("the vector sync failed: %s", s.Sync.LastError)
		}
		if s.Sync.Cursor >= last {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the vector sync did not reach event %d: %+v", last, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nearestKeys asks the worker's embedder and index alone (POST
// /_worker/nearest) for the rows nearest text.
func nearestKeys(t *testing.T, h *host, text string, all bool) []string {
	t.Helper()
	got := h.do(t, req{Method: "POST", Path: "/_worker/nearest", Body: map[string]any{"text": text, "k": 5, "all": all}})
	expect(t, got, 200, map[string]any{"model": "workers-ai/@cf/baai/bge-base-en-v1.5/768"})
	var keys []string
	for _, hit := range got.JSON["hits"].([]any) {
		keys = append(keys, hit.(map[string]any)["Key"].(string))
	}
	return keys
}

// words is the set of a text's lower-case words.
func words(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z0-9]+`).FindAllString(strings.ToLower(text), -1) {
		out[w] = true
	}
	return out
}

// sharesNoWord fails the test unless question and the row's embedded text
// have no word in common.
func sharesNoWord(t *testing.T, question string, r rowcall.Row) {
	t.Helper()
	row := words(r.Key + " " + r.Content + " " + r.Category)
	for w := range words(question) {
		if row[w] {
			t.Fatalf("%q shares %q with %s", question, w, r.Key)
		}
	}
}

// Rows are embedded by Workers AI and found in Vectorize by meaning, on the
// worker in workerd; a disabled row is not found, a deleted one is gone, a
// key longer than a Vectorize id is found under its own name, and an edit
// that changes nothing embedded embeds nothing.
func TestWorkerVectors(t *testing.T) {
	tg := startWorkerStandins(t, []string{"ROWCALL_WORKER_DEBUG=1"})
	h := tg.host
	var rows []rowcall.Row
	for _, x := range rowgen.Targets() {
		rows = append(rows, x.Row)
	}
	importRows(t, h, rows)
	s := synced(t, h, tg)
	if !s.AI || !s.Vectorize || s.Model != "workers-ai/@cf/baai/bge-base-en-v1.5/768" || s.Sync.Embedded != int64(len(rows)) {
		t.Fatalf("after importing %d rows: %+v", len(rows), s)
	}
	weather := rows[slices.IndexFunc(rows, func(r rowcall.Row) bool { return r.Key == "WEATHER_CURRENT" })]
	const q = "is it freezing outdoors"
	sharesNoWord(t, q, weather)
	if got := nearestKeys(t, h, q, false); len(got) == 0 || got[0] != "WEATHER_CURRENT" {
		t.Fatalf("nearest %q: %v, want WEATHER_CURRENT first", q, got)
	}

	// Disabled: filtered out by the index's metadata, unless all.
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/WEATHER_CURRENT", Body: map[string]any{"enabled": 0}}), 200, nil)
	s = synced(t, h, tg)
	if got := nearestKeys(t, h, q, false); slices.Contains(got, "WEATHER_CURRENT") {
		t.Fatalf("a disabled row is found: %v", got)
	}
	if got := nearestKeys(t, h, q, true); len(got) == 0 || got[0] != "WEATHER_CURRENT" {
		t.Fatalf("all: %v, want WEATHER_CURRENT first", got)
	}
	// An edit of nothing embedded or filtered on embeds nothing.
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/WEATHER_CURRENT", Body: map[string]any{"planner_rank": 3}}), 200, nil)
	if again := synced(t, h, tg); again.Sync.Embedded != s.Sync.Embedded {
		t.Fatalf("a planner_rank edit embedded %d rows", again.Sync.Embedded-s.Sync.Embedded)
	}

	// A key past Vectorize's 64-byte ids, created, found, deleted, gone.
	long := "ASTRONOMY_" + strings.Repeat("LUNAR_", 15) + "PHASE"
	moon := rowcall.NewRow(long, rowcall.TypeHTTP)
	moon.Category, moon.Target = "astronomy", "GET https://astronomy.example.test/moon"
	moon.Content = "# WHAT: The phase of the moon on a given date.\n# WHEN_TO_USE: planning a night of stargazing."
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: moon}), 201, nil)
	synced(t, h, tg)
	const mq = "will tonight's sky be bright from lunar light"
	if got := nearestKeys(t, h, mq, false); len(got) == 0 || got[0] != long {
		t.Fatalf("nearest %q: %v, want %s first", mq, got, long)
	}
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/" + long}), 200, nil)
	s = synced(t, h, tg)
	if got := nearestKeys(t, h, mq, true); slices.Contains(got, long) {
		t.Fatalf("a deleted row is found: %v", got)
	}
	if s.Sync.Deleted != 1 {
		t.Fatalf("after a delete: %+v", s)
	}
}

// Through ask, once ask ranks by vectors (the hybrid ranker): a question
// sharing no word with its row finds it on the worker; a token never sees a
// row outside its scope through vectors; a disabled row is not asked; a
// deleted one is gone.
func TestWorkerAskByMeaning(t *testing.T) {
	tg := startWorkerStandins(t, nil)
	h := tg.host
	var rows []rowcall.Row
	for _, x := range rowgen.Targets() {
		rows = append(rows, x.Row)
	}
	importRows(t, h, rows)
	synced(t, h, tg)
	weather := rows[slices.IndexFunc(rows, func(r rowcall.Row) bool { return r.Key == "WEATHER_CURRENT" })]
	const q = "is it freezing outdoors"
	sharesNoWord(t, q, weather)
	if got := ask(t, h, q); len(got) == 0 || got[0] != "WEATHER_CURRENT" {
		t.Fatalf("ask %q: %v, want WEATHER_CURRENT first", q, got)
	}
	tok, _, _ := mint(t, h, map[string]any{"categories": []string{"time"}})
	for _, k := range ask(t, h, q, tok) {
		if k != "CLOCK_PACIFIC" {
			t.Fatalf("a time-scoped token asked %q and got %s", q, k)
		}
	}

	// One mechanism embeds rows: a row written is embedded once, for its
	// similar_rows check and its vector both; its neighbour list reads the
	// vector stored; a near copy is flagged.
	before := standinTexts.Load()
	copied := weather
	copied.Key, copied.Content = "WEATHER_NOW_COPY", strings.Replace(weather.Content, "# WHAT:", "# WHAT: (a copy)", 1)
	got := h.do(t, req{Method: "POST", Path: "/api/directory", Body: copied})
	expect(t, got, 201, nil)
	if sim, _ := got.JSON["similar_rows"].([]any); len(sim) == 0 || sim[0].(map[string]any)["key"] != "WEATHER_CURRENT" {
		t.Fatalf("a copy of WEATHER_CURRENT is not flagged: %s", got.Raw)
	}
	synced(t, h, tg)
	if n := standinTexts.Load() - before; n != 1 {
		t.Fatalf("writing one row embedded %d texts, want 1", n)
	}
	before = standinTexts.Load()
	got = h.do(t, req{Method: "GET", Path: "/api/directory/WEATHER_NOW_COPY/similar"})
	expect(t, got, 200, nil)
	if sim, _ := got.JSON["similar"].([]any); len(sim) == 0 || sim[0].(map[string]any)["key"] != "WEATHER_CURRENT" {
		t.Fatalf("the copy's neighbours: %s", got.Raw)
	}
	if n := standinTexts.Load() - before; n != 0 {
		t.Fatalf("a neighbour list embedded %d texts, want 0 (the stored vector)", n)
	}
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/WEATHER_NOW_COPY"}), 200, nil)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/WEATHER_CURRENT", Body: map[string]any{"enabled": 0}}), 200, nil)
	synced(t, h, tg)
	if got := ask(t, h, q); slices.Contains(got, "WEATHER_CURRENT") {
		t.Fatalf("a disabled row is asked: %v", got)
	}
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/WEATHER_CURRENT"}), 200, nil)
	synced(t, h, tg)
	if got := ask(t, h, q); slices.Contains(got, "WEATHER_CURRENT") {
		t.Fatalf("a deleted row is asked: %v", got)
	}
}

// Rows the sync never saw — written before the instance's first write, or
// straight into D1 — have no current vector until POST /_worker/reindex
// embeds them, a page at a time; a second run embeds nothing; then ask finds
// them by meaning.
func TestWorkerReindex(t *testing.T) {
	tg := startWorkerStandins(t, []string{"ROWCALL_WORKER_DEBUG=1"})
	h := tg.host
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "R_A", "type": "fn", "target": "echo", "category": "payments",
		"content": "# WHAT: Refund a card charge in full or in part through Stripe.\n# WHEN_TO_USE: a customer was billed by mistake."}}), 201, nil)
	synced(t, h, tg)
	// Behind the worker's back: no event, so no sync.
	db := tg.DB(t)
	const tides = "# WHAT: Tide times and heights for a harbour this week.\n# WHEN_TO_USE: going sailing or fishing."
	const forecast = "# WHAT: The hourly weather forecast for a city for the next two days.\n# WHEN_TO_USE: planning something outdoors."
	if _, err := db.Exec(`UPDATE directory SET content = ?, category = 'sea' WHERE key = 'R_A'`, tides); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO directory (key, type, target, content, category, updated_at) VALUES ('R_B', 'fn', 'echo', ?, 'weather', '2026-01-01T00:00:00Z')`, forecast); err != nil {
		t.Fatal(err)
	}
	const qb = "will it rain on my picnic tomorrow afternoon"
	if got := nearestKeys(t, h, qb, true); slices.Contains(got, "R_B") {
		t.Fatalf("a row never synced has a vector: %v", got)
	}
	page := func(query string, want map[string]any) {
		t.Helper()
		got := h.do(t, req{Method: "POST", Path: "/_worker/reindex" + query})
		expect(t, got, 200, want)
		if _, ok := want["next"]; !ok {
			if _, ok := got.JSON["next"]; ok {
				t.Fatalf("reindex%s: %s, want no next", query, got.Raw)
			}
		}
	}
	page("?limit=1", map[string]any{"checked": 1, "embedded": 1, "next": "R_A"})
	page("?after=R_A&limit=1", map[string]any{"checked": 1, "embedded": 1, "next": "R_B"})
	page("?after=R_B&limit=1", map[string]any{"checked": 0, "embedded": 0})
	page("", map[string]any{"checked": 2, "embedded": 0})
	page("?force=1", map[string]any{"checked": 2, "embedded": 2})
	expect(t, h.do(t, req{Method: "POST", Path: "/_worker/reindex?limit=x"}), 400, map[string]any{"error": "invalid_request"})
	expect(t, h.do(t, req{Method: "POST", Path: "/_worker/reindex", NoAuth: true}), 401, nil)

	if got := nearestKeys(t, h, qb, false); len(got) == 0 || got[0] != "R_B" {
		t.Fatalf("nearest %q after the reindex: %v, want R_B first", qb, got)
	}
	const qa = "when is high water at the port"
	if got := nearestKeys(t, h, qa, false); len(got) == 0 || got[0] != "R_A" {
		t.Fatalf("nearest %q after the reindex: %v, want R_A first", qa, got)
	}
	if got := ask(t, h, qb); len(got) == 0 || got[0] != "R_B" {
		t.Fatalf("ask %q after the reindex: %v, want R_B first", qb, got)
	}
}

// With Workers AI but no Vectorize, the core keeps the vectors in D1 (its
// Indexer, one pass after each write) and ask ranks by them.
func TestWorkerAskWithoutVectorize(t *testing.T) {
	paths := standinConfigs(t, embedService(t))
	cfg, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	const block = "\n[[services]]\nbinding = \"VECTORIZE\"\nservice = \"rowcall-standins\"\nentrypoint = \"Vectorize\"\n"
	if !strings.Contains(string(cfg), block) {
		t.Fatalf("the test's wrangler.toml has no VECTORIZE block:\n%s", cfg)
	}
	if err := os.WriteFile(paths[0], []byte(strings.Replace(string(cfg), block, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tg := startWorkerWith(t, nil, paths)
	h := tg.host
	var rows []rowcall.Row
	for _, x := range rowgen.Targets() {
		rows = append(rows, x.Row)
	}
	importRows(t, h, rows)
	if s := workerVectors(t, h); !s.AI || s.Vectorize {
		t.Fatalf("bindings: %+v", s)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		if err := tg.DB(t).QueryRow(`SELECT COUNT(*) FROM vectors`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == len(rows) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("D1 holds %d vectors of %d rows", n, len(rows))
		}
		time.Sleep(100 * time.Millisecond)
	}
	weather := rows[slices.IndexFunc(rows, func(r rowcall.Row) bool { return r.Key == "WEATHER_CURRENT" })]
	const q = "is it freezing outdoors"
	sharesNoWord(t, q, weather)
	if got := ask(t, h, q); len(got) == 0 || got[0] != "WEATHER_CURRENT" {
		t.Fatalf("ask %q: %v, want WEATHER_CURRENT first", q, got)
	}
}
