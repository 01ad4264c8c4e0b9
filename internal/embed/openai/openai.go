// Package openai is a rowcall.Embedder over any OpenAI-compatible embeddings
// API (OpenAI, Ollama, llama.cpp's server, Hugging Face TEI, vLLM): it sends
// POST {BaseURL}/embeddings with {"model","input":[…],"encoding_format":"float"}
// and reads {"object":"list","data":[{"index","embedding"}…],"model","usage"}.
//
//	e, err := openai.New(openai.Config{Provider: "local", BaseURL: "http://127.0.0.1:11434/v1",
//		Model: "nomic-embed-text", Auth: "bearer:OLLAMA_KEY", Env: env, Client: client})
//	vs, err := e.Embed(ctx, []string{"refund a charge", "book a room"})
//
// The operator configures it like agent rows' model providers (internal/app):
// ROWCALL_EMBED_PROVIDER names one of ROWCALL_MODEL_PROVIDERS (whose URL is
// BaseURL, the same API root chat completions use), ROWCALL_EMBED_MODEL the
// model, ROWCALL_EMBED_AUTH the credential in an auth column's form
// (bearer:ENV, headers:{…}; read from Env at each request, as an agent row's
// is), ROWCALL_EMBED_DIM the dimension when it must be known before the first
// answer.
//
// Texts go Batch at a time (default 32, what TEI accepts by default; OpenAI
// takes up to 2048), one request after another. Answers are placed by their
// index, whatever order data lists them in; every vector is L2-normalised
// here (servers need not normalise); the dimension is Config.Dim or, when 0,
// the first answer's, and an answer of another length is refused, so two
// lengths never meet in one index. An empty text is sent as one space (the
// API refuses empty strings). Failures are *rowcall.Error values with the
// codes below; nothing is retried here (the caller's queue retries).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/runners/httpcall"
)

// The codes of the errors Embed returns.
const (
	EStatus      rowcall.Code = "embed_status"       // the server answered an error; Args: the status
	ETimeout     rowcall.Code = "embed_timeout"      // no answer within Config.Timeout
	EFetch       rowcall.Code = "embed_fetch"        // no answer: refused, DNS, TLS, outbound policy
	EBadResponse rowcall.Code = "embed_bad_response" // a 2xx body that is not an embeddings list for the inputs
	EDimension   rowcall.Code = "embed_dimension"    // a vector of another length; Args: got, want
	EConfig      rowcall.Code = "embed_config"       // the configuration is unusable
)

// Defaults for Config's zero values.
const (
	DefaultBatch       = 32
	DefaultTimeout     = 30 * time.Second
	DefaultMaxResponse = 64 << 20
	MaxBatch           = 2048 // OpenAI's limit on inputs per request
)

// Config configures an Embedder.
type Config struct {
	Provider string // the provider's name, for messages ("local")
	BaseURL  string // the API root; requests go to BaseURL + "/embeddings"
	Model    string // the model id sent
	Dim      int    // the vectors' length; 0: learned from the first answer
	Auth     string // the credential, in an auth column's form ("" for none)
	Env      rowcall.Env
	Client   *http.Client // nil: a plain client
	Batch    int          // texts per request (0: DefaultBatch; at most MaxBatch)
	Timeout  time.Duration
}

// Embedder embeds texts through one provider and model. It is safe for
// concurrent use.
type Embedder struct {
	cfg Config
	url string

	mu  sync.Mutex
	dim int
}

var _ rowcall.Embedder = (*Embedder)(nil)

// New checks cfg and returns its Embedder; it sends nothing.
func New(cfg Config) (*Embedder, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &rowcall.Error{Code: EConfig, Message: fmt.Sprintf("embeddings provider %s: %q is not an absolute http(s) URL", cfg.Provider, cfg.BaseURL),
			HowToFix: "give the provider in ROWCALL_MODEL_PROVIDERS an API root such as http://127.0.0.1:11434/v1"}
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, &rowcall.Error{Code: EConfig, Message: "embeddings provider " + cfg.Provider + ": no model",
			HowToFix: "set ROWCALL_EMBED_MODEL to the embedding model's id, e.g. text-embedding-3-small or nomic-embed-text"}
	}
	if cfg.Dim < 0 || cfg.Batch < 0 || cfg.Batch > MaxBatch {
		return nil, &rowcall.Error{Code: EConfig, Message: fmt.Sprintf("embeddings provider %s: dimension %d, batch %d", cfg.Provider, cfg.Dim, cfg.Batch),
			HowToFix: "the dimension is 0 (learned) or positive; the batch 1 to " + strconv.Itoa(MaxBatch)}
	}
	if _, fail := httpcall.ApplyAuth(&http.Request{URL: u, Header: http.Header{}}, cfg.Auth, nil); fail != nil {
		return nil, &rowcall.Error{Code: EConfig, Message: "ROWCALL_EMBED_AUTH: " + fail.String(),
			HowToFix: "give the credential as an auth column does: bearer:ENV_NAME or headers:{\"Name\":\"ENV_NAME\"}"}
	}
	if cfg.Batch == 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	return &Embedder{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/embeddings", dim: cfg.Dim}, nil
}

// Model implements rowcall.Embedder: provider "openai", the model id, and
// the dimension (0 until the first answer when Config.Dim is 0).
func (e *Embedder) Model() rowcall.EmbedModel {
	e.mu.Lock()
	defer e.mu.Unlock()
	return rowcall.EmbedModel{Provider: "openai", Name: e.cfg.Model, Dim: e.dim}
}

// Embed implements rowcall.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += e.cfg.Batch {
		vs, err := e.batch(ctx, texts[i:min(i+e.cfg.Batch, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// request is the body of POST {base}/embeddings.
type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// response is its answer.
type response struct {
	Object string `json:"object"`
	Data   []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// batch embeds one request's texts.
func (e *Embedder) batch(parent context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = t
		if strings.TrimSpace(t) == "" {
			in[i] = " "
		}
	}
	body, _ := json.Marshal(request{Model: e.cfg.Model, Input: in, EncodingFormat: "float"})
	ctx, cancel := context.WithTimeout(parent, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, e.fail(EConfig, nil, err.Error(), "check the provider's URL in ROWCALL_MODEL_PROVIDERS")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	cred, fail := httpcall.ApplyAuth(req, e.cfg.Auth, e.cfg.Env)
	if fail != nil {
		return nil, e.fail(EConfig, nil, fail.String(), "fix ROWCALL_EMBED_AUTH")
	}
	resp, err := e.cfg.Client.Do(req)
	if err != nil {
		if perr := parent.Err(); perr != nil {
			return nil, e.fail(ETimeout, nil, "the caller gave up: "+perr.Error(), "")
		}
		if ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
			return nil, e.fail(ETimeout, nil, "no answer within "+e.cfg.Timeout.String(), "check that the server is up and not overloaded")
		}
		return nil, e.fail(EFetch, nil, redact.String(httpcall.FetchMessage(err), cred.Secrets),
			"check the provider's URL in ROWCALL_MODEL_PROVIDERS and that the server is running; a private address must be reachable under the outbound policy")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, DefaultMaxResponse+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, e.fail(ETimeout, nil, "the answer did not finish within "+e.cfg.Timeout.String(), "")
		}
		return nil, e.fail(EFetch, nil, redact.String(err.Error(), cred.Secrets), "")
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, e.fail(EStatus, []string{strconv.Itoa(resp.StatusCode)}, errorText(raw, resp.Status, cred.Secrets), howToFix(resp.StatusCode))
	}
	if len(raw) > DefaultMaxResponse {
		return nil, e.fail(EBadResponse, nil, "an answer over "+strconv.Itoa(DefaultMaxResponse)+" bytes", "lower the batch")
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, e.fail(EBadResponse, nil, "not an embeddings list ("+err.Error()+"): "+shown(string(raw), cred.Secrets),
			"check that the provider serves the OpenAI embeddings API at "+e.url)
	}
	if len(r.Data) != len(texts) {
		return nil, e.fail(EBadResponse, nil, fmt.Sprintf("%d embeddings for %d inputs", len(r.Data), len(texts)), "check that the model is an embedding model")
	}
	out := make([][]float32, len(texts))
	for n, d := range r.Data {
		i := n // a server that leaves index out lists data in input order
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= len(out) || out[i] != nil {
			return nil, e.fail(EBadResponse, nil, fmt.Sprintf("data[%d] has index %d, out of range or repeated", n, i), "")
		}
		v, err := e.check(d.Embedding)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// check normalises v and holds it to the model's dimension, learning it from
// the first vector when it is not configured.
func (e *Embedder) check(v []float32) ([]float32, error) {
	e.mu.Lock()
	if e.dim == 0 && len(v) > 0 {
		e.dim = len(v)
	}
	dim := e.dim
	e.mu.Unlock()
	if len(v) != dim {
		return nil, e.fail(EDimension, []string{strconv.Itoa(len(v)), strconv.Itoa(dim)},
			fmt.Sprintf("a vector of %d dimensions where the model's are %d", len(v), dim),
			"set ROWCALL_EMBED_DIM to the model's dimension, or ROWCALL_EMBED_MODEL to the model the vectors were made with; changing model re-embeds")
	}
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsInf(ss, 0) || math.IsNaN(ss) {
		return nil, e.fail(EBadResponse, nil, "a vector that cannot be normalised (zero, infinite or NaN)", "")
	}
	inv := float32(1 / math.Sqrt(ss))
	for j := range v {
		v[j] *= inv
	}
	return v, nil
}

func (e *Embedder) fail(code rowcall.Code, args []string, msg, fix string) error {
	return &rowcall.Error{Code: code, Args: args, Message: "embeddings provider " + e.cfg.Provider + " (" + e.cfg.Model + "): " + msg, HowToFix: fix}
}

// errorText is an error answer's error.message, else its body, else the
// status; redacted, on one line, cut.
func errorText(raw []byte, status string, secrets []string) string {
	var b struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	s := strings.TrimSpace(string(raw))
	if json.Unmarshal(raw, &b) == nil && b.Error != nil && b.Error.Message != "" {
		s = b.Error.Message
	}
	if s == "" {
		s = status
	}
	return shown(s, secrets)
}

// shown is text from the server as an error shows it: secrets redacted, on
// one line, cut to 300 bytes.
func shown(s string, secrets []string) string {
	return redact.Clip(strings.Join(strings.Fields(redact.String(s, secrets)), " "), 300, secrets)
}

func howToFix(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "check the credential ROWCALL_EMBED_AUTH names (e.g. bearer:OPENAI_API_KEY) and that the variable is set"
	case status == http.StatusNotFound:
		return "check ROWCALL_EMBED_MODEL and that the provider's URL is its API root (…/v1)"
	case status == http.StatusTooManyRequests || status >= 500:
		return "the server is busy or failing; the rows are embedded again later"
	}
	return "check ROWCALL_EMBED_MODEL and the provider's documentation"
}
