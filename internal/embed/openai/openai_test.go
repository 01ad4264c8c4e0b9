package openai_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/openai"
	"github.com/rowcall/rowcall/test/embedserver"
)

const key = "sk-embed-test-2b9f4c1d7e"

func env(name string) (string, bool) {
	if name == "EMBED_KEY" {
		return key, true
	}
	return "", false
}

func newEmbedder(t *testing.T, s *embedserver.Server, cfg openai.Config) *openai.Embedder {
	t.Helper()
	cfg.Provider, cfg.BaseURL = "local", s.URL
	if cfg.Model == "" {
		cfg.Model = "words-64"
	}
	if cfg.Auth == "" {
		cfg.Auth = "bearer:EMBED_KEY"
	}
	cfg.Env = rowcall.EnvFunc(env)
	e, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func code(t *testing.T, err error) rowcall.Code {
	t.Helper()
	var re *rowcall.Error
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a *rowcall.Error", err, err)
	}
	return re.Code
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Vectors come back one per text, in the texts' order (by index, whatever
// order the server lists them in), normalised, in batches of Config.Batch,
// with the configured model and credential on every request.
func TestEmbedOrderBatchesAndNormalises(t *testing.T) {
	s := embedserver.Start(t, nil)
	s.Key = key
	s.Set(embedserver.Knobs{Reverse: true})
	e := newEmbedder(t, s, openai.Config{Batch: 2})
	texts := []string{"refund a card charge", "book a hotel room", "refund the charge", "", "translate to japanese"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	want := embedserver.Words(64)([]string{texts[0], texts[1], texts[2], " ", texts[4]})
	for i, v := range vs {
		if n := cosine(v, v); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm² %v, want 1", i, n)
		}
		var ss float64
		for _, x := range want[i] {
			ss += float64(x) * float64(x)
		}
		if c := cosine(v, want[i]) / math.Sqrt(ss); c < 0.9999 {
			t.Errorf("vector %d is not text %d's (cosine %v): the answers were placed out of order", i, i, c)
		}
	}
	if m := e.Model(); m != (rowcall.EmbedModel{Provider: "openai", Name: "words-64", Dim: 64}) {
		t.Fatalf("model %+v", m)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests for 5 texts in batches of 2, want 3", len(reqs))
	}
	var sent []string
	for _, r := range reqs {
		if r.Status != 200 || r.Model != "words-64" || r.Header.Get("Authorization") != "Bearer "+key || r.Path != "/v1/embeddings" {
			t.Fatalf("request %+v", r)
		}
		sent = append(sent, r.Input...)
	}
	if strings.Join(sent, "|") != "refund a card charge|book a hotel room|refund the charge| |translate to japanese" {
		t.Fatalf("sent %q", sent)
	}
}

// A 401 names the code, the server's message and the setting to fix, and
// never the key.
func TestEmbed401(t *testing.T) {
	s := embedserver.Start(t, nil)
	s.Key = "sk-another-key-entirely"
	_, err := newEmbedder(t, s, openai.Config{}).Embed(context.Background(), []string{"x"})
	if code(t, err) != openai.EStatus || !strings.HasPrefix(err.Error(), "embed_status:401: embeddings provider local (words-64): Incorrect API key") {
		t.Fatalf("error %v", err)
	}
	var re *rowcall.Error
	errors.As(err, &re)
	if !strings.Contains(re.HowToFix, "ROWCALL_EMBED_AUTH") || strings.Contains(err.Error(), key) {
		t.Fatalf("how to fix %q, error %v", re.HowToFix, err)
	}
}

func TestEmbed500(t *testing.T) {
	s := embedserver.Start(t, nil)
	s.Set(embedserver.Knobs{Status: 500})
	_, err := newEmbedder(t, s, openai.Config{}).Embed(context.Background(), []string{"x"})
	if code(t, err) != openai.EStatus || !strings.HasPrefix(err.Error(), "embed_status:500:") || !strings.Contains(err.Error(), "The server had an error") {
		t.Fatalf("error %v", err)
	}
}

// A vector of another length than the configured (or first learned)
// dimension is refused, so two lengths never meet in one index.
func TestEmbedWrongDimension(t *testing.T) {
	s := embedserver.Start(t, nil)
	s.Set(embedserver.Knobs{Dim: 48})
	_, err := newEmbedder(t, s, openai.Config{Dim: 64}).Embed(context.Background(), []string{"x"})
	if code(t, err) != openai.EDimension || !strings.HasPrefix(err.Error(), "embed_dimension:48:64:") {
		t.Fatalf("configured 64, answered 48: error %v", err)
	}
	s.Set(embedserver.Knobs{})
	learned := newEmbedder(t, s, openai.Config{})
	if _, err := learned.Embed(context.Background(), []string{"x"}); err != nil || learned.Model().Dim != 64 {
		t.Fatalf("learning: %v, dim %d", err, learned.Model().Dim)
	}
	s.Set(embedserver.Knobs{Dim: 32})
	if _, err := learned.Embed(context.Background(), []string{"y"}); code(t, err) != openai.EDimension {
		t.Fatalf("learned 64, answered 32: error %v", err)
	}
}

func TestEmbedTimeout(t *testing.T) {
	s := embedserver.Start(t, nil)
	s.Set(embedserver.Knobs{Delay: time.Minute})
	_, err := newEmbedder(t, s, openai.Config{Timeout: 50 * time.Millisecond}).Embed(context.Background(), []string{"x"})
	if code(t, err) != openai.ETimeout || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("error %v", err)
	}
}

// What the server answers must be an embeddings list for exactly the inputs.
func TestEmbedBadResponse(t *testing.T) {
	s := embedserver.Start(t, func(texts []string) [][]float32 { return embedserver.Words(8)(texts[:len(texts)-1]) })
	_, err := newEmbedder(t, s, openai.Config{}).Embed(context.Background(), []string{"a", "b"})
	if code(t, err) != openai.EBadResponse || !strings.Contains(err.Error(), "1 embeddings for 2 inputs") {
		t.Fatalf("error %v", err)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []openai.Config{
		{BaseURL: "127.0.0.1:8080/v1", Model: "m"},
		{BaseURL: "http://127.0.0.1:8080/v1"},
		{BaseURL: "http://127.0.0.1:8080/v1", Model: "m", Batch: 5000},
		{BaseURL: "http://127.0.0.1:8080/v1", Model: "m", Auth: "bearer:ROWCALL_RECEIPT_KEY"},
	} {
		if _, err := openai.New(cfg); err == nil || rowcall.ErrorCode(err) != openai.EConfig {
			t.Errorf("New(%+v) = %v, want %s", cfg, err, openai.EConfig)
		}
	}
}
