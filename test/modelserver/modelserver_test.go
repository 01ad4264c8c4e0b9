package modelserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, s *Server, path, key, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", strings.TrimSuffix(s.URL, "/v1")+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return resp.StatusCode, resp.Header, m
}

func TestCompletionShape(t *testing.T) {
	s := Start(t)
	s.Script(Reply{ToolCalls: []ToolCall{{Name: "NOW", Arguments: `{"args":""}`}}, Usage: &Usage{PromptTokens: 10, CompletionTokens: 5}})
	st, _, m := post(t, s, "/v1/chat/completions", "", `{"model":"grok-4.3","messages":[{"role":"user","content":"hi"}],"stream":false}`)
	if st != 200 || m["object"] != "chat.completion" || m["model"] != "grok-4.3" || !strings.HasPrefix(m["id"].(string), "chatcmpl-") || m["created"] == nil {
		t.Fatalf("%d %v", st, m)
	}
	ch := m["choices"].([]any)[0].(map[string]any)
	msg := ch["message"].(map[string]any)
	tc := msg["tool_calls"].([]any)[0].(map[string]any)
	if ch["index"] != 0.0 || ch["finish_reason"] != "tool_calls" || msg["role"] != "assistant" || msg["content"] != nil ||
		tc["type"] != "function" || tc["function"].(map[string]any)["name"] != "NOW" || tc["id"] == "" {
		t.Fatalf("%v", ch)
	}
	u := m["usage"].(map[string]any)
	if u["prompt_tokens"] != 10.0 || u["completion_tokens"] != 5.0 || u["total_tokens"] != 15.0 {
		t.Fatalf("%v", u)
	}
}

func TestErrors(t *testing.T) {
	s := Start(t)
	s.Key = "sk-right-key-123456"
	ok := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		path, key, body string
		status          int
		msg, code       string
	}{
		{"/v1/chat/completions", "", ok, 401, "You didn't provide an API key.", ""},
		{"/v1/chat/completions", "sk-wrong-key-000000", ok, 401, "Incorrect API key provided: sk-************0000.", "invalid_api_key"},
		{"/v1/models", s.Key, ok, 404, "Invalid URL (POST /v1/models)", ""},
		{"/v1/chat/completions", s.Key, `{"model":`, 400, "We could not parse the JSON body", ""},
		{"/v1/chat/completions", s.Key, `{"messages":[{"role":"user","content":"x"}]}`, 400, "you must provide a model parameter", ""},
		{"/v1/chat/completions", s.Key, `{"model":"m","messages":[]}`, 400, "[] is too short - 'messages'", ""},
		{"/v1/chat/completions", s.Key, `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[]}`, 400, "[] is too short - 'tools'", ""},
		{"/v1/chat/completions", s.Key, `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`, 400, "non-streaming", ""},
		{"/v1/chat/completions", s.Key, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, 400, "messages with role 'tool' must be a response", ""},
		{"/v1/chat/completions", s.Key, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"A","arguments":"{}"}}]},{"role":"user","content":"y"}]}`, 400, "did not have response messages: c1", ""},
		{"/v1/chat/completions", s.Key, ok, 500, "modelserver: script exhausted", ""},
	}
	for _, c := range cases {
		st, _, m := post(t, s, c.path, c.key, c.body)
		e, _ := m["error"].(map[string]any)
		if st != c.status || e == nil || !strings.Contains(e["message"].(string), c.msg) || (c.code != "" && e["code"] != c.code) {
			t.Errorf("%s %s: %d %v", c.path, c.body, st, m)
		}
		if _, has := e["param"]; !has {
			t.Errorf("error body lacks param: %v", m)
		}
	}
	s.Script(Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}})
	st, h, m := post(t, s, "/v1/chat/completions", s.Key, ok)
	if e := m["error"].(map[string]any); st != 429 || h.Get("Retry-After") != "2" || e["code"] != "rate_limit_exceeded" || e["type"] != "requests" {
		t.Fatalf("%d %v %v", st, h, m)
	}
	if n := len(s.Requests()); n != len(cases)+1 {
		t.Fatalf("recorded %d requests", n)
	}
}
