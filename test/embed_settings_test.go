package test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/rowgen"
	"github.com/rowcall/rowcall/test/embedserver"
)

// The host reads the embedding settings from its environment: a provider
// that is not among the model providers stops it with the setting to fix,
// and a configured one lets it start. (That ask's embeddings then reach the
// provider is internal/app's TestEmbedProviderSetting, over the host's own
// outbound client and environment.)
func TestHostReadsEmbedSettings(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--no-examples")
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=", "ROWCALL_EMBED_PROVIDER=nosuch")
	done := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	out, err := cmd.CombinedOutput()
	done.Stop()
	if err == nil || !strings.Contains(string(out), "ROWCALL_EMBED_PROVIDER: nosuch is not among the model providers") {
		t.Fatalf("serve with ROWCALL_EMBED_PROVIDER=nosuch: %v\n%s", err, out)
	}
	s := embedserver.Start(t, nil)
	h := startHost(t, nil, "ROWCALL_MODEL_PROVIDERS=emb="+s.URL, "ROWCALL_EMBED_PROVIDER=emb",
		"ROWCALL_EMBED_MODEL=nomic-embed-text", "ROWCALL_EMBED_AUTH=bearer:EMB_KEY", "EMB_KEY=sk-x")
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory"}), 200, nil)
}

// A host configured with an OpenAI-compatible provider (ROWCALL_MODEL_PROVIDERS,
// ROWCALL_EMBED_PROVIDER=NAME, ROWCALL_EMBED_MODEL, ROWCALL_EMBED_AUTH)
// embeds its rows and ask's questions through it, and ask ranks by those
// vectors: a question sharing no word with its row finds it. The provider is
// the embedserver stand-in computing real vectors with the embedded encoder.
func TestHostEmbedsThroughProvider(t *testing.T) {
	if !haveWeights() {
		if os.Getenv("CI") == "true" {
			t.Fatal("no USE-lite weights: run go run ./internal/embed/use/fetch")
		}
		t.Skip("SKIPPED, NOT PASSED: no USE-lite weights (go run ./internal/embed/use/fetch)")
	}
	dir, err := use.DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := use.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	s := embedserver.Start(t, func(texts []string) [][]float32 {
		mu.Lock()
		defer mu.Unlock()
		return enc.EmbedBatch(texts)
	})
	s.Key = "sk-x"
	h := startHost(t, nil, "ROWCALL_MODEL_PROVIDERS=emb="+s.URL, "ROWCALL_EMBED_PROVIDER=emb",
		"ROWCALL_EMBED_MODEL=nomic-embed-text", "ROWCALL_EMBED_AUTH=bearer:EMB_KEY", "EMB_KEY=sk-x")
	var rows []rowcall.Row
	for _, x := range rowgen.Targets() {
		rows = append(rows, x.Row)
	}
	importRows(t, h, rows)

	// The host embeds after the import commits: wait until the provider has
	// been asked for every row's text.
	want := map[string]bool{}
	for i := range rows {
		want[rowcall.EmbedText(&rows[i])] = true
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		for _, r := range s.Requests() {
			if r.Status != 200 || r.Model != "nomic-embed-text" || r.Header.Get("Authorization") != "Bearer sk-x" {
				t.Fatalf("a request to the provider: %d %s %q", r.Status, r.Model, r.Header.Get("Authorization"))
			}
			for _, in := range r.Input {
				if want[in] {
					delete(want, in)
				}
			}
		}
		if len(want) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows' texts never reached the provider", len(want))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// and until each vector is stored (a row's neighbour list waits for the
	// pass embedding it).
	for _, r := range rows {
		waitSimilar(t, h, r.Key)
	}

	weather := rows[slices.IndexFunc(rows, func(r rowcall.Row) bool { return r.Key == "WEATHER_CURRENT" })]
	const q = "is it freezing outdoors"
	sharesNoWord(t, q, weather)
	asked := len(s.Requests())
	// Vectors are made and ranked asynchronously of the writes, so the answer
	// is awaited rather than taken at once (on a busy machine it lagged).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got := ask(t, h, q)
		if len(got) > 0 && got[0] == "WEATHER_CURRENT" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ask %q: %v, want WEATHER_CURRENT first", q, got)
		}
	}
	if reqs := s.Requests()[asked:]; len(reqs) == 0 || !slices.Contains(reqs[len(reqs)-1].Input, q) {
		t.Fatalf("the question was not embedded by the provider: %+v", reqs)
	}
}
