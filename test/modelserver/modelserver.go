// Package modelserver is an OpenAI-compatible chat completions server on
// loopback for tests: a real HTTP server that speaks the wire format of
// POST /v1/chat/completions (non-streaming), answers from a script the test
// supplies, and records every request it receives.
//
// It checks requests the way the real API does and answers a bad one with
// an OpenAI error body ({"error":{"message","type","param","code"}}) without
// using a scripted reply: a missing or wrong bearer key (when Server.Key is
// set) is 401 invalid_api_key; an unknown path 404; a body that is not JSON,
// a missing model, an empty messages array, an empty tools array, "stream":
// true (this server answers only streaming off), a tool message that answers
// no preceding tool call, or an assistant tool call left unanswered is 400.
//
// A valid request takes the next scripted Reply (or, when the script is
// empty, the Fallback's; with neither it is a 500 "script exhausted"). A
// Reply is either a completion (Content and/or ToolCalls) or an error
// (Status ≥ 400, with the error body OpenAI sends for that status unless
// Error is set), or Raw bytes written as they are.
package modelserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Server is a running model server.
type Server struct {
	// URL is the API root to configure as a provider: http://127.0.0.1:PORT/v1.
	URL string
	// Key, when set, is the only bearer credential accepted.
	Key string

	srv      *httptest.Server
	mu       sync.Mutex
	script   []Reply
	fallback func(Request) Reply
	seen     []Request
	ids      atomic.Int64
}

// Reply is one scripted answer.
type Reply struct {
	Content      string     // the assistant's text ("" with ToolCalls: content null)
	ToolCalls    []ToolCall // native tool calls; IDs are generated when empty
	FinishReason string     // default "tool_calls" with ToolCalls, else "stop"
	Refusal      string     // message.refusal
	Usage        *Usage     // default: estimated from the request and the reply
	Model        string     // default: the request's model

	Status int               // ≥ 400: an error answer
	Error  *Error            // its body's error object (default: OpenAI's for Status)
	Header map[string]string // extra response headers (Retry-After, …)
	Raw    string            // when set: the body, written as is with Status (default 200)
	Delay  time.Duration     // wait this long before answering (or until the client leaves)
}

// ToolCall is one function call in a reply.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON object text
}

// Usage is a completion's token usage.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// Error is the object inside an OpenAI error body.
type Error struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	Chat   ChatRequest // Body decoded (zero when it did not decode)
	Status int         // what the server answered
}

// ChatRequest is a chat completions request body.
type ChatRequest struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	Stream   *bool     `json:"stream,omitempty"`
}

// Message is one chat message. Content is nil when it was null or absent.
type Message struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []WireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

// Text is the message's content, "" when null.
func (m Message) Text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

// Tool is one offered tool.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// WireToolCall is a tool call as it travels in messages.
type WireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Start runs a server on 127.0.0.1 until the test ends.
func Start(t testing.TB) *Server {
	s := New()
	t.Cleanup(s.Close)
	return s
}

// New runs a server on 127.0.0.1; Close stops it.
func New() *Server {
	s := &Server{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Script queues replies, answered in order.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Fallback answers requests when the script is empty.
func (s *Server) Fallback(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = f
}

// Pending is how many scripted replies are still unused.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.seen...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	status := s.answer(w, r, &req)
	req.Status = status
	s.mu.Lock()
	s.seen = append(s.seen, req)
	s.mu.Unlock()
}

// answer writes the response and returns its status.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req *Request) int {
	if r.URL.Path != "/v1/chat/completions" {
		return writeError(w, 404, nil, Error{Message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")", Type: "invalid_request_error"})
	}
	if r.Method != http.MethodPost {
		return writeError(w, 405, nil, Error{Message: "Method " + r.Method + " not allowed for /v1/chat/completions; use POST", Type: "invalid_request_error"})
	}
	if s.Key != "" {
		auth := r.Header.Get("Authorization")
		key, ok := strings.CutPrefix(auth, "Bearer ")
		switch {
		case auth == "":
			return writeError(w, 401, nil, Error{Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", Type: "invalid_request_error"})
		case !ok || key != s.Key:
			return writeError(w, 401, nil, Error{Message: "Incorrect API key provided: " + mask(key) + ". You can find your API key at https://platform.openai.com/account/api-keys.",
				Type: "invalid_request_error", Code: str("invalid_api_key")})
		}
	}
	if msg, param := validate(req); msg != "" {
		e := Error{Message: msg, Type: "invalid_request_error"}
		if param != "" {
			e.Param = str(param)
		}
		return writeError(w, 400, nil, e)
	}
	s.mu.Lock()
	var rep Reply
	switch {
	case len(s.script) > 0:
		rep, s.script = s.script[0], s.script[1:]
	case s.fallback != nil:
		f := s.fallback
		s.mu.Unlock()
		rep = f(*req)
		s.mu.Lock()
	default:
		s.mu.Unlock()
		return writeError(w, 500, nil, Error{Message: "modelserver: script exhausted: no reply left for this request", Type: "server_error"})
	}
	s.mu.Unlock()
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return 499
		}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	switch {
	case rep.Raw != "":
		st := rep.Status
		if st == 0 {
			st = 200
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		io.WriteString(w, rep.Raw)
		return st
	case rep.Status >= 400:
		e := defaultError(rep.Status, req.Chat.Model)
		if rep.Error != nil {
			e = *rep.Error
		}
		return writeError(w, rep.Status, rep.Header, e)
	}
	return s.complete(w, req, rep)
}

// complete writes a chat.completion object.
func (s *Server) complete(w http.ResponseWriter, req *Request, rep Reply) int {
	n := s.ids.Add(1)
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
	if rep.Content != "" || len(rep.ToolCalls) == 0 {
		msg["content"] = rep.Content
	}
	if rep.Refusal != "" {
		msg["refusal"] = rep.Refusal
	}
	finish := rep.FinishReason
	if len(rep.ToolCalls) > 0 {
		var calls []map[string]any
		for i, tc := range rep.ToolCalls {
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", n, i)
			}
			calls = append(calls, map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		msg["tool_calls"] = calls
		if finish == "" {
			finish = "tool_calls"
		}
	}
	if finish == "" {
		finish = "stop"
	}
	u := rep.Usage
	if u == nil {
		u = estimate(req.Chat, rep)
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	model := rep.Model
	if model == "" {
		model = req.Chat.Model
	}
	out := map[string]any{
		"id":                 fmt.Sprintf("chatcmpl-rowcall%06d", n),
		"object":             "chat.completion",
		"created":            time.Now().Unix(),
		"model":              model,
		"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":              map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens, "prompt_tokens_details": map[string]any{"cached_tokens": 0, "audio_tokens": 0}, "completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
		"service_tier":       "default",
		"system_fingerprint": "fp_rowcall",
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", n))
	w.WriteHeader(200)
	json.NewEncoder(w).Encode(out)
	return 200
}

// validate checks a request body as the real API does; msg is "" when it is
// acceptable.
func validate(req *Request) (msg, param string) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(req.Body, &raw); err != nil {
		return "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", ""
	}
	if err := json.Unmarshal(req.Body, &req.Chat); err != nil {
		return "Invalid request body: " + err.Error(), ""
	}
	c := req.Chat
	switch {
	case c.Model == "":
		return "you must provide a model parameter", "model"
	case len(c.Messages) == 0:
		return "[] is too short - 'messages'", "messages"
	case c.Stream != nil && *c.Stream:
		return "modelserver answers only non-streaming requests (\"stream\": false)", "stream"
	}
	if t, ok := raw["tools"]; ok && len(c.Tools) == 0 && string(bytes.TrimSpace(t)) != "null" {
		return "[] is too short - 'tools'", "tools"
	}
	for i, t := range c.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return fmt.Sprintf("Invalid 'tools[%d]': a tool needs type \"function\" and a function name", i), fmt.Sprintf("tools[%d]", i)
		}
	}
	pending := map[string]bool{}
	var order []string
	for i, m := range c.Messages {
		switch m.Role {
		case "system", "developer", "user":
			if m.Content == nil {
				return fmt.Sprintf("Invalid value for 'content': expected a string, got null. (messages[%d])", i), fmt.Sprintf("messages.[%d].content", i)
			}
		case "assistant":
			if m.Content == nil && len(m.ToolCalls) == 0 {
				return fmt.Sprintf("Invalid value for 'content': expected a string, got null. (messages[%d])", i), fmt.Sprintf("messages.[%d].content", i)
			}
		case "tool":
			if !pending[m.ToolCallID] {
				return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", fmt.Sprintf("messages.[%d].role", i)
			}
			delete(pending, m.ToolCallID)
			continue
		default:
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.", m.Role), fmt.Sprintf("messages[%d].role", i)
		}
		if len(pending) > 0 {
			var left []string
			for _, id := range order {
				if pending[id] {
					left = append(left, id)
				}
			}
			return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(left, ", "), "messages"
		}
		order = order[:0]
		for _, tc := range m.ToolCalls {
			pending[tc.ID] = true
			order = append(order, tc.ID)
		}
	}
	if len(pending) > 0 {
		return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(order, ", "), "messages"
	}
	return "", ""
}

// defaultError is OpenAI's error object for status.
func defaultError(status int, model string) Error {
	switch {
	case status == 401:
		return Error{Message: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", Type: "invalid_request_error", Code: str("invalid_api_key")}
	case status == 403:
		return Error{Message: "You are not allowed to sample from this model", Type: "invalid_request_error", Code: str("model_not_allowed")}
	case status == 404:
		return Error{Message: "The model `" + model + "` does not exist or you do not have access to it.", Type: "invalid_request_error", Param: str("model"), Code: str("model_not_found")}
	case status == 429:
		return Error{Message: "Rate limit reached for " + model + " on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.", Type: "requests", Param: nil, Code: str("rate_limit_exceeded")}
	case status >= 500:
		return Error{Message: "The server had an error while processing your request. Sorry about that!", Type: "server_error"}
	}
	return Error{Message: http.StatusText(status), Type: "invalid_request_error"}
}

func writeError(w http.ResponseWriter, status int, header map[string]string, e Error) int {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]Error{"error": e})
	return status
}

// estimate is a rough token count (four bytes a token) when a reply names none.
func estimate(c ChatRequest, rep Reply) *Usage {
	var in, out int64
	for _, m := range c.Messages {
		in += int64(len(m.Text()))/4 + 4
		for _, tc := range m.ToolCalls {
			in += int64(len(tc.Function.Name)+len(tc.Function.Arguments))/4 + 4
		}
	}
	for _, t := range c.Tools {
		in += int64(len(t.Function.Name)+len(t.Function.Description)+len(t.Function.Parameters))/4 + 8
	}
	out = int64(len(rep.Content))/4 + 1
	for _, tc := range rep.ToolCalls {
		out += int64(len(tc.Name)+len(tc.Arguments))/4 + 4
	}
	return &Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
}

// mask writes a key as the real API does: its first three and last four
// characters.
func mask(key string) string {
	if len(key) <= 8 {
		return strings.Repeat("*", len(key))
	}
	return key[:3] + strings.Repeat("*", len(key)-7) + key[len(key)-4:]
}

func str(s string) *string { return &s }

// ToolCallsOf returns the assistant tool calls in a request's messages.
func ToolCallsOf(c ChatRequest) []WireToolCall {
	var out []WireToolCall
	for _, m := range c.Messages {
		out = append(out, m.ToolCalls...)
	}
	return out
}
