package agent

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/test/modelserver"
)

const testKey = "sk-test-0123456789abcdef"

// fakeRows is a directory in memory.
type fakeRows map[string]rowcall.Row

func (f fakeRows) Lookup(_ context.Context, key string) (rowcall.Row, error) {
	r, ok := f[key]
	if !ok {
		return r, &rowcall.Error{Code: rowcall.ENotFound, Message: "no row with key " + key}
	}
	return r, nil
}

func (f fakeRows) Rows(_ context.Context, category string, limit int) ([]rowcall.Row, error) {
	var out []rowcall.Row
	for _, r := range f {
		if r.Enabled != 0 && (category == "" || r.Category == category) {
			out = append(out, r)
		}
	}
	return out[:min(len(out), limit)], nil
}

func (f fakeRows) add(key, category string, mod func(*rowcall.Row)) {
	r := rowcall.NewRow(key, rowcall.TypeHTTP)
	r.Category, r.Target, r.Content = category, "GET http://upstream/"+key, "# WHAT: the "+key+" row"
	if mod != nil {
		mod(&r)
	}
	f[key] = r
}

// fakeCalls stands in for the dispatcher's nested calls.
type fakeCalls struct {
	mu     sync.Mutex
	calls  [][2]string
	answer func(ctx context.Context, parent *rowcall.Invocation, key, body string) rowcall.Output
}

func (f *fakeCalls) Call(ctx context.Context, parent *rowcall.Invocation, key, body string) rowcall.Output {
	f.mu.Lock()
	f.calls = append(f.calls, [2]string{key, body})
	f.mu.Unlock()
	if f.answer != nil {
		return f.answer(ctx, parent, key, body)
	}
	return rowcall.Output{Result: "HTTP 200:" + key + " got " + body, Material: true, CostUSD: 0.25}
}

type fixture struct {
	ms    *modelserver.Server
	r     *Runner
	rows  fakeRows
	calls *fakeCalls
	env   map[string]string
}

func setup(t *testing.T, mod func(*Config)) *fixture {
	t.Helper()
	f := &fixture{ms: modelserver.Start(t), rows: fakeRows{}, calls: &fakeCalls{}, env: map[string]string{"GROK_API_KEY": testKey}}
	f.ms.Key = testKey
	cfg := Config{
		Providers: map[string]Provider{"xai": {BaseURL: f.ms.URL}},
		Prices:    Prices{"grok-4.3": {Input: 3, Output: 15}},
		Rows:      f.rows, Catalog: f.rows,
		RetryBase: time.Millisecond, RetryMax: 50 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	f.r = New(cfg)
	return f
}

func agentRow(key, content, allowed string) rowcall.Row {
	r := rowcall.NewRow(key, rowcall.TypeAgent)
	r.Target, r.Auth, r.Content, r.AllowedCategories, r.Category = "grok-4.3", "bearer:GROK_API_KEY", content, allowed, "agents"
	return r
}

func (f *fixture) run(row rowcall.Row, body string) rowcall.Output {
	return f.runCtx(context.Background(), row, body)
}

func (f *fixture) runCtx(ctx context.Context, row rowcall.Row, body string) rowcall.Output {
	inv := &rowcall.Invocation{Row: &row, Body: body, Trace: "t_test", Calls: f.calls,
		Env: rowcall.EnvFunc(func(n string) (string, bool) { v, ok := f.env[n]; return v, ok })}
	return f.r.Run(ctx, inv)
}

func (f *fixture) requests(t *testing.T, n int) []modelserver.Request {
	t.Helper()
	reqs := f.ms.Requests()
	if len(reqs) != n {
		t.Fatalf("model server got %d requests, want %d", len(reqs), n)
	}
	return reqs
}

const labPrompt = "You are a friendly peptide concierge (LAB TEST v1). One warm sentence,\nthen end with [REPLY]your text[/REPLY]."

func TestOneShot(t *testing.T) {
	f := setup(t, nil)
	f.ms.Script(modelserver.Reply{Content: "Happy to help! [REPLY]Hi! How can I help today?[/REPLY]", Usage: &modelserver.Usage{PromptTokens: 1000, CompletionTokens: 200}})
	out := f.run(agentRow("PROMPT_LAB_AGENT", labPrompt, ""), "hello | there")
	if out.Result != "Happy to help! [REPLY]Hi! How can I help today?[/REPLY]" || out.Status != 200 || !out.Material {
		t.Fatalf("%+v", out)
	}
	if math.Abs(out.CostUSD-0.006) > 1e-12 || !slices.Contains(out.Secrets, testKey) {
		t.Fatalf("cost %v secrets %v", out.CostUSD, out.Secrets)
	}
	req := f.requests(t, 1)[0]
	if req.Header.Get("Authorization") != "Bearer "+testKey || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", req.Header)
	}
	c := req.Chat
	if c.Model != "grok-4.3" || len(c.Messages) != 2 || c.Messages[0].Role != "system" || c.Messages[0].Text() != labPrompt ||
		c.Messages[1].Role != "user" || c.Messages[1].Text() != "hello | there" || c.Tools != nil {
		t.Fatalf("request %s", req.Body)
	}
	if !strings.Contains(string(req.Body), `"stream":false`) {
		t.Fatalf("stream not off: %s", req.Body)
	}
}

func TestIncludesCompose(t *testing.T) {
	f := setup(t, nil)
	f.rows.add("BLOCK_VOICE", "blocks", func(r *rowcall.Row) { r.Content = "# WHAT: voice rules\nWarm, brief." })
	f.rows.add("BLOCK_OFF", "blocks", func(r *rowcall.Row) { r.Content, r.Enabled = "never sent", 0 })
	f.rows.add("BLOCK_EMOJI", "blocks", func(r *rowcall.Row) { r.Content = "At most one emoji." })
	row := agentRow("ROUTER", "# WHAT: the router\nRoute the user's message.", "")
	row.Includes = " BLOCK_VOICE, BLOCK_OFF,,BLOCK_EMOJI "
	f.ms.Script(modelserver.Reply{Content: "[REPLY]ok[/REPLY]"})
	if out := f.run(row, "hi"); out.Failed() {
		t.Fatal(out.Result)
	}
	if got := f.requests(t, 1)[0].Chat.Messages[0].Text(); got != "Warm, brief.\n\nAt most one emoji.\n\nRoute the user's message." {
		t.Fatalf("system %q", got)
	}
	row.Includes = "BLOCK_VOICE,BLOCK_GONE"
	want := "ERR:agent:include_missing:BLOCK_GONE — includes names BLOCK_GONE, which is not in the directory; create it or take it out of includes"
	if out := f.run(row, "hi"); out.Result != want || out.Material {
		t.Fatalf("%+v", out)
	}
	f.requests(t, 1) // nothing sent
}

func TestTagLoop(t *testing.T) {
	f := setup(t, nil)
	f.rows.add("WEATHER", "tools", nil)
	f.rows.add("PAY", "billing", nil)
	f.ms.Script(
		modelserver.Reply{Content: "Checking. [WEATHER]37.77|-122.42[/WEATHER] [PAY]100[/PAY] [NOPE][/NOPE] [REPLY]one sec[/REPLY]", Usage: &modelserver.Usage{PromptTokens: 100, CompletionTokens: 10}},
		modelserver.Reply{Content: "[REPLY]It is 15.7°C.[/REPLY]", Usage: &modelserver.Usage{PromptTokens: 200, CompletionTokens: 20}},
	)
	out := f.run(agentRow("CONCIERGE", "Use tools.", "tools"), "weather?")
	if out.Result != "[REPLY]It is 15.7°C.[/REPLY]" {
		t.Fatalf("%+v", out)
	}
	if !slices.Equal(f.calls.calls, [][2]string{{"WEATHER", "37.77|-122.42"}}) {
		t.Fatalf("calls %v", f.calls.calls)
	}
	if want := (300*3.0+30*15.0)/1e6 + 0.25; math.Abs(out.CostUSD-want) > 1e-12 {
		t.Fatalf("cost %v, want %v", out.CostUSD, want)
	}
	msgs := f.requests(t, 2)[1].Chat.Messages
	if len(msgs) != 4 || msgs[2].Role != "assistant" || !strings.HasPrefix(msgs[2].Text(), "Checking.") || msgs[3].Role != "user" {
		t.Fatalf("%+v", msgs)
	}
	want := feedbackHeader +
		"\n[RESULT WEATHER]\nHTTP 200:WEATHER got 37.77|-122.42\n[/RESULT WEATHER]" +
		"\n[RESULT PAY]\nERR:agent:not_allowed:PAY — this agent may call only rows in the categories tools (its allowed_categories), and PAY is not one of them; nothing ran\n[/RESULT PAY]" +
		"\n[RESULT NOPE]\nERR:agent:not_allowed:NOPE — this agent may call only rows in the categories tools (its allowed_categories), and NOPE is not one of them; nothing ran\n[/RESULT NOPE]"
	if msgs[3].Text() != want {
		t.Fatalf("fed back:\n%s\nwant:\n%s", msgs[3].Text(), want)
	}
}

func TestEmptyAllowedCallsNothing(t *testing.T) {
	f := setup(t, nil)
	f.rows.add("WEATHER", "tools", nil)
	f.ms.Script(modelserver.Reply{Content: "[WEATHER]1|2[/WEATHER]"}, modelserver.Reply{Content: "[REPLY]sorry[/REPLY]"})
	if out := f.run(agentRow("LAB", "x", ""), "q"); out.Result != "[REPLY]sorry[/REPLY]" {
		t.Fatal(out.Result)
	}
	if len(f.calls.calls) != 0 {
		t.Fatalf("calls %v", f.calls.calls)
	}
	if got := f.requests(t, 2)[1].Chat.Messages[3].Text(); !strings.Contains(got, "ERR:agent:not_allowed:WEATHER — this agent's allowed_categories is empty, so it may call no rows; nothing ran") {
		t.Fatal(got)
	}
}

func TestNativeToolCalls(t *testing.T) {
	f := setup(t, nil)
	schema := `{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"}},"required":["latitude","longitude"]}`
	f.rows.add("WEATHER", "tools", func(r *rowcall.Row) { r.InputSchema, r.PlannerRank = schema, 10 })
	f.rows.add("ECHO", "tools", nil)
	f.rows.add("HIDDEN", "tools", func(r *rowcall.Row) { r.PlannerVisible = 0 })
	f.rows.add("PAY", "billing", nil)
	f.ms.Script(
		modelserver.Reply{ToolCalls: []modelserver.ToolCall{
			{ID: "call_a", Name: "WEATHER", Arguments: `{"longitude":-122.42,"latitude":37.77}`},
			{ID: "call_b", Name: "PAY", Arguments: `{"args":"100"}`},
			{ID: "call_c", Name: "ECHO", Arguments: `not json`},
		}},
		modelserver.Reply{Content: "[ECHO]a|b[/ECHO]"},
		modelserver.Reply{Content: "[REPLY]done[/REPLY]"},
	)
	out := f.run(agentRow("CONCIERGE", "Use tools.", "tools"), "go")
	if out.Result != "[REPLY]done[/REPLY]" {
		t.Fatalf("%+v", out)
	}
	if !slices.Equal(f.calls.calls, [][2]string{{"WEATHER", "37.77|-122.42"}, {"ECHO", "a|b"}}) {
		t.Fatalf("calls %v", f.calls.calls)
	}
	reqs := f.requests(t, 3)
	var names []string
	for _, tl := range reqs[0].Chat.Tools {
		names = append(names, tl.Function.Name)
	}
	if !slices.Equal(names, []string{"WEATHER", "ECHO"}) {
		t.Fatalf("tools %v", names)
	}
	if got := string(reqs[0].Chat.Tools[0].Function.Parameters); got != schema {
		t.Fatalf("typed parameters %s", got)
	}
	msgs := reqs[1].Chat.Messages
	if len(msgs) != 6 || len(msgs[2].ToolCalls) != 3 || msgs[2].Content != nil {
		t.Fatalf("%s", reqs[1].Body)
	}
	tool := func(i int, id, prefix string) {
		t.Helper()
		if m := msgs[i]; m.Role != "tool" || m.ToolCallID != id || !strings.HasPrefix(m.Text(), prefix) {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
	tool(3, "call_a", "HTTP 200:WEATHER got 37.77|-122.42")
	tool(4, "call_b", "ERR:agent:not_allowed:PAY")
	tool(5, "call_c", "ERR:agent:bad_tool_arguments:ECHO — the arguments are not a JSON object")
	// The third request carries the whole conversation, tool and tag rounds.
	if n := len(reqs[2].Chat.Messages); n != 8 {
		t.Fatalf("%d messages", n)
	}
}

func TestNoToolsProvider(t *testing.T) {
	f := setup(t, func(c *Config) {
		c.Providers = map[string]Provider{"xai": {BaseURL: c.Providers["xai"].BaseURL, NoTools: true}}
	})
	f.rows.add("WEATHER", "tools", nil)
	f.ms.Script(modelserver.Reply{Content: "hi"})
	f.run(agentRow("A", "x", "*"), "q")
	if req := f.requests(t, 1)[0]; strings.Contains(string(req.Body), `"tools"`) {
		t.Fatalf("%s", req.Body)
	}
}

func TestRetryThenSuccess(t *testing.T) {
	f := setup(t, nil)
	f.ms.Script(
		modelserver.Reply{Status: 429, Header: map[string]string{"Retry-After": "0"}},
		modelserver.Reply{Status: 502},
		modelserver.Reply{Content: "[REPLY]ok[/REPLY]"},
	)
	out := f.run(agentRow("A", "x", ""), "q")
	if out.Result != "[REPLY]ok[/REPLY]" || out.Status != 200 {
		t.Fatalf("%+v", out)
	}
	f.requests(t, 3)
}

func TestRetriesExhausted(t *testing.T) {
	f := setup(t, nil)
	f.ms.Script(modelserver.Reply{Status: 503}, modelserver.Reply{Status: 503}, modelserver.Reply{Status: 503})
	out := f.run(agentRow("A", "x", ""), "q")
	if want := "ERR:agent:503:The server had an error while processing your request. Sorry about that! (gave up after 3 attempts)"; out.Result != want || out.Status != 503 || !out.Material {
		t.Fatalf("%+v", out)
	}
	f.requests(t, 3)

	f.ms.Script(modelserver.Reply{Status: 429, Header: map[string]string{"Retry-After": "3600"}})
	out = f.run(agentRow("A", "x", ""), "q")
	if !strings.HasPrefix(out.Result, "ERR:agent:429:Rate limit reached for grok-4.3") || !strings.HasSuffix(out.Result, "(the provider asked for a retry after more than 50ms; not waited for)") {
		t.Fatal(out.Result)
	}
	f.requests(t, 4)
}

func TestAuthFailures(t *testing.T) {
	f := setup(t, nil)
	f.env["GROK_API_KEY"] = "sk-wrong-key-000000000000"
	out := f.run(agentRow("A", "x", ""), "q")
	want := "ERR:agent:401:Incorrect API key provided: sk-******************0000. You can find your API key at https://platform.openai.com/account/api-keys."
	if out.Result != want || out.Status != 401 || !out.Material {
		t.Fatalf("%+v", out)
	}
	delete(f.env, "GROK_API_KEY")
	out = f.run(agentRow("A", "x", ""), "q")
	if !strings.HasPrefix(out.Result, "ERR:agent:401:You didn't provide an API key.") || out.Status != 401 {
		t.Fatalf("%+v", out)
	}
	reqs := f.requests(t, 2) // 401 is never retried
	if h := reqs[1].Header.Get("Authorization"); h != "" {
		t.Fatalf("sent %q", h)
	}
	f.ms.Script(modelserver.Reply{Status: 403})
	f.env["GROK_API_KEY"] = testKey
	if out := f.run(agentRow("A", "x", ""), "q"); out.Status != 403 || !strings.HasPrefix(out.Result, "ERR:agent:403:") {
		t.Fatalf("%+v", out)
	}
	for auth, want := range map[string]string{
		"apikey:X":          "ERR:agent:auth:unknown_prefix:apikey",
		"bearer:not a name": `ERR:agent:auth:bad_spec:bearer: "not a name" is not an environment variable name`,
		`oauth:{"token_url":"https://auth.example/token","client_id":"$ID","client_secret":"$SECRET"}`: "ERR:agent:auth:unsupported:oauth",
	} {
		row := agentRow("A", "x", "")
		row.Auth = auth
		if out := f.run(row, "q"); !strings.HasPrefix(out.Result, want) {
			t.Errorf("auth %s: %q", auth, out.Result)
		}
	}
	f.requests(t, 3)
}

func TestOtherAuthForms(t *testing.T) {
	f := setup(t, nil)
	f.ms.Key = ""
	f.ms.Fallback(func(modelserver.Request) modelserver.Reply { return modelserver.Reply{Content: "ok"} })
	row := agentRow("A", "x", "")
	row.Auth = `headers:{"api-key":"$GROK_API_KEY","X-Team":"blue"}`
	f.run(row, "q")
	row.Auth = "query:key=GROK_API_KEY"
	f.run(row, "q")
	reqs := f.requests(t, 2)
	if reqs[0].Header.Get("Api-Key") != testKey || reqs[0].Header.Get("X-Team") != "blue" {
		t.Fatalf("%v", reqs[0].Header)
	}
	if reqs[1].Path != "/v1/chat/completions" {
		t.Fatal(reqs[1].Path)
	}
}

func TestRedaction(t *testing.T) {
	f := setup(t, nil)
	f.ms.Script(modelserver.Reply{Status: 400, Error: &modelserver.Error{Message: "key " + testKey + " is not valid here", Type: "invalid_request_error"}})
	out := f.run(agentRow("A", "x", ""), "q")
	if strings.Contains(out.Result, testKey) || out.Result != "ERR:agent:400:key [REDACTED] is not valid here" {
		t.Fatal(out.Result)
	}
	f.ms.Script(modelserver.Reply{Content: "your key is " + testKey})
	if out := f.run(agentRow("A", "x", ""), "q"); out.Result != "your key is [REDACTED]" {
		t.Fatal(out.Result)
	}
}

func TestMalformedResponses(t *testing.T) {
	f := setup(t, nil)
	cases := map[string]string{
		`{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"`: "ERR:agent:bad_response:the provider answered 200 with a body that is not a chat completion (unexpected end of JSON input): {",
		`{"id":"chatcmpl-1","object":"chat.completion","choices":[]}`:                                                      "ERR:agent:bad_response:the provider answered 200 with no choices",
		`{"error":{"message":"upstream overloaded","type":"server_error"}}`:                                                "ERR:agent:bad_response:the provider answered 200 with an error: upstream overloaded",
		`<html>gateway</html>`: "ERR:agent:bad_response:the provider answered 200 with a body that is not a chat completion (invalid character '<' looking for beginning of value): <html>gateway</html>",
	}
	for raw, want := range cases {
		f.ms.Script(modelserver.Reply{Raw: raw})
		if out := f.run(agentRow("A", "x", ""), "q"); !strings.HasPrefix(out.Result, want) || out.Status != 200 {
			t.Errorf("%s:\n got %q\nwant %q", raw, out.Result, want)
		}
	}
	f.ms.Script(modelserver.Reply{Content: ""}, modelserver.Reply{Refusal: "I can't help with that."})
	if out := f.run(agentRow("A", "x", ""), "q"); out.Result != "ERR:agent:empty — the model answered with no text and no calls (round 1)" {
		t.Error(out.Result)
	}
	if out := f.run(agentRow("A", "x", ""), "q"); out.Result != "ERR:agent:refused:I can't help with that." {
		t.Error(out.Result)
	}
}

func TestTimeoutAndFetch(t *testing.T) {
	f := setup(t, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	f.ms.Script(modelserver.Reply{Delay: 5 * time.Second, Content: "late"})
	start := time.Now()
	out := f.run(agentRow("A", "x", ""), "q")
	if out.Result != "ERR:agent:timeout:50ms — xai did not answer grok-4.3 in time" || time.Since(start) > 3*time.Second || out.Material {
		t.Fatalf("%+v", out)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	f2 := setup(t, func(c *Config) { c.Providers = map[string]Provider{"xai": {BaseURL: dead.URL + "/v1"}} })
	if out := f2.run(agentRow("A", "x", ""), "q"); !strings.HasPrefix(out.Result, "ERR:agent:fetch:") || strings.Contains(out.Result, dead.URL) {
		t.Fatal(out.Result)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if out := f.runCtx(ctx, agentRow("A", "x", ""), "q"); out.Result != "ERR:agent:canceled:context canceled" {
		t.Fatal(out.Result)
	}
}

func TestRoundAndCallLimits(t *testing.T) {
	f := setup(t, func(c *Config) { c.MaxRounds, c.MaxCalls = 3, 2 })
	f.rows.add("T", "tools", nil)
	f.ms.Fallback(func(modelserver.Request) modelserver.Reply {
		return modelserver.Reply{Content: "again [T]1[/T][T]2[/T][T]3[/T]"}
	})
	out := f.run(agentRow("A", "x", "tools"), "q")
	if !strings.HasPrefix(out.Result, "ERR:agent:round_limit:3 — the model was still making calls after 3 rounds (the last answer's calls did not run); its last text: again [T]1[/T]") {
		t.Fatal(out.Result)
	}
	if len(f.calls.calls) != 4 { // two rounds fed back, two calls each
		t.Fatalf("calls %v", f.calls.calls)
	}
	reqs := f.requests(t, 3)
	if fed := reqs[1].Chat.Messages[3].Text(); !strings.Contains(fed, "[RESULT T]\nERR:agent:too_many_calls — one answer may make at most 2 calls") {
		t.Fatal(fed)
	}
}

func TestNestedAgents(t *testing.T) {
	f := setup(t, func(c *Config) { c.MaxRequests = 5 })
	self := agentRow("LOOPY", "x", "agents")
	f.rows["LOOPY"] = self
	// The fake dispatcher runs agent rows with the runner itself, on the same context.
	f.calls.answer = func(ctx context.Context, parent *rowcall.Invocation, key, body string) rowcall.Output {
		row := f.rows[key]
		return f.r.Run(ctx, &rowcall.Invocation{Row: &row, Body: body, Env: parent.Env, Calls: f.calls})
	}
	f.ms.Script(modelserver.Reply{Content: "[LOOPY]again[/LOOPY]"}, modelserver.Reply{Content: "stop"})
	if out := f.run(self, "q"); out.Result != "stop" {
		t.Fatal(out.Result)
	}
	if fed := f.requests(t, 2)[1].Chat.Messages[3].Text(); !strings.Contains(fed, "ERR:agent:cycle:LOOPY>LOOPY — an agent called itself") {
		t.Fatal(fed)
	}
	// A chain of distinct agents shares one request budget.
	for _, k := range []string{"A1", "A2", "A3"} {
		f.rows[k] = agentRow(k, "x", "agents")
	}
	f.ms.Fallback(func(r modelserver.Request) modelserver.Reply {
		return modelserver.Reply{Content: "[A1]x[/A1][A2]x[/A2][A3]x[/A3]"}
	})
	out := f.run(f.rows["A1"], "q")
	if !strings.Contains(out.Result, "ERR:agent:") {
		t.Fatal(out.Result)
	}
	if n := len(f.ms.Requests()); n > 2+5 {
		t.Fatalf("%d model requests, budget 5", n)
	}
}

func TestShape(t *testing.T) {
	f := setup(t, nil)
	f.rows.add("BLOCK", "blocks", func(r *rowcall.Row) { r.Content = "Block." })
	f.rows.add("WEATHER", "tools", nil)
	row := agentRow("A", "Prompt.", "tools")
	row.Includes = "BLOCK"
	inv := &rowcall.Invocation{Row: &row, Body: "hi", Shape: true, Env: rowcall.EnvFunc(func(string) (string, bool) { return testKey, true })}
	out := f.r.Run(context.Background(), inv)
	if out.Result != "SHAPE:agent:POST "+f.ms.URL+"/chat/completions" || out.Material || out.Status != 0 {
		t.Fatalf("%+v", out)
	}
	b, _ := json.Marshal(out.Plan)
	s := string(b)
	if strings.Contains(s, testKey) || strings.Contains(s, "Authorization") || !strings.Contains(s, `"content":"Block.\n\nPrompt."`) ||
		!strings.Contains(s, `"name":"WEATHER"`) || !strings.Contains(s, `"stream":false`) {
		t.Fatal(s)
	}
	f.requests(t, 0)
}

// scopedCalls is a Caller that reports a scope, as a token-holding caller's does.
type scopedCalls struct {
	*fakeCalls
	hidden map[string]bool
}

func (s scopedCalls) Visible(_ context.Context, key string) bool { return !s.hidden[key] }

func TestScopeAndWildcard(t *testing.T) {
	f := setup(t, nil)
	f.rows.add("OPEN", "tools", nil)
	f.rows.add("SCOPED_OUT", "tools", nil)
	f.ms.Script(modelserver.Reply{Content: "[OPEN]1[/OPEN][SCOPED_OUT]2[/SCOPED_OUT][GHOST]3[/GHOST]"}, modelserver.Reply{Content: "done"})
	row := agentRow("A", "x", "*")
	inv := &rowcall.Invocation{Row: &row, Body: "q", Calls: scopedCalls{f.calls, map[string]bool{"SCOPED_OUT": true}},
		Env: rowcall.EnvFunc(func(string) (string, bool) { return testKey, true })}
	if out := f.r.Run(context.Background(), inv); out.Result != "done" {
		t.Fatal(out.Result)
	}
	if !slices.Equal(f.calls.calls, [][2]string{{"OPEN", "1"}}) {
		t.Fatalf("calls %v", f.calls.calls)
	}
	reqs := f.requests(t, 2)
	if len(reqs[0].Chat.Tools) != 1 || reqs[0].Chat.Tools[0].Function.Name != "OPEN" {
		t.Fatalf("tools %s", reqs[0].Body)
	}
	fed := reqs[1].Chat.Messages[3].Text()
	if !strings.Contains(fed, "[RESULT SCOPED_OUT]\nERR:unknown_key:SCOPED_OUT\n") || !strings.Contains(fed, "[RESULT GHOST]\nERR:unknown_key:GHOST\n") {
		t.Fatal(fed)
	}
}
