// Package embedserver is an OpenAI-compatible embeddings server on loopback
// for tests: a real HTTP server that speaks the wire format of
// POST /v1/embeddings, computes vectors with the function the test gives it
// (Words, a hashed bag of words, or the embedded encoder), and records every
// request it receives.
//
// The request is {"model":…, "input": "text" | ["text", …],
// "encoding_format": "float"?, "dimensions"?, "user"?}; the answer is
//
//	{"object":"list",
//	 "data":[{"object":"embedding","index":0,"embedding":[0.1, …]}, …],
//	 "model":"…","usage":{"prompt_tokens":n,"total_tokens":n}}
//
// It checks requests the way the real API does and answers a bad one with an
// OpenAI error body ({"error":{"message","type","param","code"}}): a missing
// or wrong bearer key (when Server.Key is set) is 401; an unknown path 404; a
// body that is not JSON, a missing model, an input that is empty, holds an
// empty string or more than MaxInputs texts, or an encoding_format other
// than float is 400. Test knobs (Server.Set) make it answer otherwise: in
// reverse order of index, with a status, after a delay, or with vectors cut
// to another length.
package embedserver

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// MaxInputs is the most texts one request may carry (OpenAI's documented
// limit: "any array must be 2048 dimensions or less").
const MaxInputs = 2048

// Server is a running embeddings server.
type Server struct {
	// URL is the API root to configure as a model provider: http://127.0.0.1:PORT/v1.
	URL string
	// Key, when set, is the only bearer credential accepted.
	Key string

	embed func(texts []string) [][]float32
	srv   *httptest.Server
	mu    sync.Mutex
	knobs Knobs
	seen  []Request
}

// Knobs change how the server answers valid requests.
type Knobs struct {
	Reverse bool          // list data in reverse order of index (clients must use index)
	Status  int           // ≥ 400: answer every request with this status and OpenAI's error body
	Delay   time.Duration // wait this long before answering (or until the client leaves)
	Dim     int           // > 0: cut or pad every vector to this length
}

// Request is one request the server received.
type Request struct {
	Path   string
	Header http.Header
	Model  string
	Input  []string
	Status int // what the server answered
}

// Start runs a server on 127.0.0.1 until the test ends; embed computes the
// vectors (Words(dim) when nil).
func Start(t testing.TB, embed func(texts []string) [][]float32) *Server {
	if embed == nil {
		embed = Words(64)
	}
	s := &Server{embed: embed}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// Set replaces the server's knobs.
func (s *Server) Set(k Knobs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.knobs = k
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.seen...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	req := Request{Path: r.URL.Path, Header: r.Header.Clone()}
	req.Status = s.answer(w, r, &req)
	s.mu.Lock()
	s.seen = append(s.seen, req)
	s.mu.Unlock()
}

type body struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	User           string          `json:"user"`
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, req *Request) int {
	if r.URL.Path != "/v1/embeddings" {
		return writeError(w, 404, "Invalid URL ("+r.Method+" "+r.URL.Path+")", "invalid_request_error", "", "")
	}
	if r.Method != http.MethodPost {
		return writeError(w, 405, "Method "+r.Method+" not allowed for /v1/embeddings; use POST", "invalid_request_error", "", "")
	}
	if s.Key != "" {
		auth := r.Header.Get("Authorization")
		key, ok := strings.CutPrefix(auth, "Bearer ")
		switch {
		case auth == "":
			return writeError(w, 401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "invalid_request_error", "", "")
		case !ok || key != s.Key:
			return writeError(w, 401, "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "", "invalid_api_key")
		}
	}
	raw, _ := io.ReadAll(r.Body)
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		return writeError(w, 400, "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", "invalid_request_error", "", "")
	}
	req.Model = b.Model
	var one string
	if json.Unmarshal(b.Input, &one) == nil {
		req.Input = []string{one}
	} else if err := json.Unmarshal(b.Input, &req.Input); err != nil {
		return writeError(w, 400, "'input' must be a string or an array of strings (this stand-in takes no token arrays)", "invalid_request_error", "input", "")
	}
	switch {
	case b.Model == "":
		return writeError(w, 400, "you must provide a model parameter", "invalid_request_error", "model", "")
	case len(req.Input) == 0:
		return writeError(w, 400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", "invalid_request_error", "input", "")
	case len(req.Input) > MaxInputs:
		return writeError(w, 400, fmt.Sprintf("'$.input' is invalid: %d inputs, at most %d", len(req.Input), MaxInputs), "invalid_request_error", "input", "")
	case b.EncodingFormat != "" && b.EncodingFormat != "float":
		return writeError(w, 400, "this stand-in answers only encoding_format float", "invalid_request_error", "encoding_format", "")
	}
	for _, t := range req.Input {
		if t == "" {
			return writeError(w, 400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", "invalid_request_error", "input", "")
		}
	}
	s.mu.Lock()
	k := s.knobs
	s.mu.Unlock()
	if k.Delay > 0 {
		select {
		case <-time.After(k.Delay):
		case <-r.Context().Done():
			return 499
		}
	}
	if k.Status >= 400 {
		msg, typ := "The server had an error while processing your request. Sorry about that!", "server_error"
		if k.Status < 500 {
			msg, typ = http.StatusText(k.Status), "invalid_request_error"
		}
		return writeError(w, k.Status, msg, typ, "", "")
	}
	vecs := s.embed(req.Input)
	data := make([]map[string]any, len(vecs))
	tokens := 0
	for i, v := range vecs {
		if k.Dim > 0 {
			v = append(v[:min(len(v), k.Dim):min(len(v), k.Dim)], make([]float32, max(0, k.Dim-len(v)))...)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		tokens += len(strings.Fields(req.Input[i]))
	}
	if k.Reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": b.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
	return 200
}

func writeError(w http.ResponseWriter, status int, msg, typ, param, code string) int {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	if code != "" {
		e["code"] = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": e})
	return status
}

// Words returns an embedding function of dim dimensions: each lower-cased
// word adds 1 at its FNV hash's position, so texts sharing words are near,
// and the vectors are NOT normalised (a server need not normalise; the client
// must).
func Words(dim int) func(texts []string) [][]float32 {
	return func(texts []string) [][]float32 {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			v := make([]float32, dim)
			for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
				h := fnv.New32a()
				h.Write([]byte(w))
				v[h.Sum32()%uint32(dim)]++
			}
			v[0] += 0.5 // no text is the zero vector
			out[i] = v
		}
		return out
	}
}
