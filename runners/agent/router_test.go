package agent

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/typed"
)

func TestTags(t *testing.T) {
	cases := []struct {
		in   string
		want []Tag
	}{
		{"no tags", nil},
		{"[GROK_MODELS][/GROK_MODELS]", []Tag{{"GROK_MODELS", ""}}},
		{"Checking. [ZZ_TEST_TEMPERATURE]37.77|-122.42[/ZZ_TEST_TEMPERATURE] then [NOW]\n[/NOW]",
			[]Tag{{"ZZ_TEST_TEMPERATURE", "37.77|-122.42"}, {"NOW", ""}}},
		{`[DIR_PATCH]ROUTER|{"content":"a|b"}[/DIR_PATCH]`, []Tag{{"DIR_PATCH", `ROUTER|{"content":"a|b"}`}}},
		{"[REPLY]hi [NOW][/NOW][/REPLY]", nil},
		{"[A]x[/A][REPLY]done[/REPLY][B]y[/B]", []Tag{{"A", "x"}, {"B", "y"}}},
		{"see [1] and [note] and [a b]", nil},
		{"[A][B]inner[/B][/A]", []Tag{{"A", "[B]inner[/B]"}}},
		{"[A]unclosed [B]z[/B]", []Tag{{"B", "z"}}},
		{"[A]1[/A][A]2[/A]", []Tag{{"A", "1"}, {"A", "2"}}},
		{"[x.y-z]v[/x.y-z]", []Tag{{"x.y-z", "v"}}},
		{"[REPLY]unclosed [A]x[/A]", []Tag{{"A", "x"}}},
		{"[", nil}, {"]", nil}, {"[]", nil}, {"[/A]x[A]", nil},
	}
	for _, c := range cases {
		if got := Tags(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Tags(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func FuzzTags(f *testing.F) {
	f.Add("[A]x[/A][REPLY]y[/REPLY]")
	f.Add("[[A]][/A]]")
	f.Fuzz(func(t *testing.T, s string) {
		for _, tag := range Tags(s) {
			if !rowcall.ValidKey(tag.Key) || tag.Key == ReplyTag {
				t.Fatalf("bad key %q", tag.Key)
			}
			if !strings.Contains(s, "["+tag.Key+"]") || !strings.Contains(s, "[/"+tag.Key+"]") {
				t.Fatalf("tag %q not in %q", tag.Key, s)
			}
		}
	})
}

func TestAllowed(t *testing.T) {
	a := ParseAllowed(" tools , grok,,")
	if a.All || !a.Permits("tools") || !a.Permits("grok") || a.Permits("Tools") || a.Permits("") || a.None() {
		t.Fatalf("%+v", a)
	}
	if all := ParseAllowed("tools,*"); !all.All || !all.Permits("") || !all.Permits("x") || all.String() != "*" {
		t.Fatalf("%+v", all)
	}
	if none := ParseAllowed(" "); !none.None() || none.Permits("") || none.Permits("tools") {
		t.Fatalf("%+v", none)
	}
	want := "ERR:agent:not_allowed:PAY — this agent may call only rows in the categories tools, grok (its allowed_categories), and PAY is not one of them; nothing ran"
	if got := a.refusal("PAY"); got != want {
		t.Fatalf("refusal %q", got)
	}
}

func TestToolBody(t *testing.T) {
	typedRow := &rowcall.Row{Key: "T", InputSchema: `{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"},"note":{"type":"string"}}}`}
	plain := &rowcall.Row{Key: "P"}
	cases := []struct {
		row  *rowcall.Row
		args string
		want string
	}{
		{typedRow, `{"longitude":-122.42,"latitude":37.77}`, "37.77|-122.42"},
		{typedRow, `{"latitude":1,"note":"a|b"}`, "1||a|b"},
		{typedRow, `{"latitude":null,"longitude":{"x":[1, 2]}}`, `|{"x":[1,2]}`},
		{typedRow, ``, ""},
		{plain, `{"args":"37.77|-122.42"}`, "37.77|-122.42"},
		{plain, `{}`, ""},
	}
	for _, c := range cases {
		got, err := ToolBody(c.row, c.args)
		if err != nil || got != c.want {
			t.Errorf("ToolBody(%s, %s) = %q, %v; want %q", c.row.Key, c.args, got, err, c.want)
		}
	}
	for _, bad := range []string{`[1]`, `{"a":`, `"x"`, `{} {}`} {
		if _, err := ToolBody(plain, bad); err != typed.ErrNotObject {
			t.Errorf("ToolBody(%s): %v", bad, err)
		}
	}
	// The rule every caller shares (typed.Body): a name the row does not take,
	// and a '|' anywhere but the last string argument, are refused.
	for _, c := range []struct {
		row       *rowcall.Row
		args, err string
	}{
		{plain, `{"city":"Paris","days":3}`, `unknown argument "city": this capability takes one string argument, args`},
		{typedRow, `{"latitude":"1|2","longitude":3}`, `argument "latitude" contains '|'`},
		{typedRow, `{"latitude":1,"altitude":2}`, `unknown argument "altitude"`},
	} {
		if got, err := ToolBody(c.row, c.args); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ToolBody(%s, %s) = %q, %v; want error %q", c.row.Key, c.args, got, err, c.err)
		}
	}
}

func TestProjectTool(t *testing.T) {
	row := &rowcall.Row{Key: "ZZ_TEST_TEMPERATURE", Content: "# WHAT: Current temperature.\n# WHEN_TO_USE: live weather.\n# ARGS: $1=latitude | $2=longitude\nx"}
	tl := projectTool(row)
	if tl.Type != "function" || tl.Function.Name != row.Key || tl.Function.Description != "Current temperature. When to use: live weather." {
		t.Fatalf("%+v", tl)
	}
	var p map[string]any
	json.Unmarshal(tl.Function.Parameters, &p)
	args := p["properties"].(map[string]any)["args"].(map[string]any)
	if args["type"] != "string" || !strings.Contains(args["description"].(string), "$1=latitude | $2=longitude") {
		t.Fatalf("%s", tl.Function.Parameters)
	}
	row.InputSchema = `{ "type": "object", "properties": {"latitude": {"type":"number"}} }`
	if got := string(projectTool(row).Function.Parameters); got != `{"type":"object","properties":{"latitude":{"type":"number"}}}` {
		t.Fatalf("typed parameters %s", got)
	}
	row.InputSchema = `{"type":"string"}` // no properties: the string projection
	if got := string(projectTool(row).Function.Parameters); !strings.Contains(got, `"args"`) {
		t.Fatalf("untyped parameters %s", got)
	}
}

func TestRankTools(t *testing.T) {
	mk := func(key string, rank int64, mod func(*rowcall.Row)) rowcall.Row {
		r := rowcall.NewRow(key, rowcall.TypeHTTP)
		r.PlannerRank = rank
		if mod != nil {
			mod(&r)
		}
		return r
	}
	rows := []rowcall.Row{
		mk("B", 100, nil), mk("A", 100, nil), mk("FIRST", 1, nil), mk("SELF", 1, nil),
		mk("HIDDEN", 1, func(r *rowcall.Row) { r.PlannerVisible = 0 }), mk("OFF", 1, func(r *rowcall.Row) { r.Enabled = 0 }),
		mk("has.dot", 1, nil), mk("A", 100, nil),
	}
	var keys []string
	for _, r := range rankTools(rows, "SELF", 3) {
		keys = append(keys, r.Key)
	}
	if !reflect.DeepEqual(keys, []string{"FIRST", "A", "B"}) {
		t.Fatalf("%v", keys)
	}
}

func TestParseProviderAndPrices(t *testing.T) {
	n, p, err := ParseProvider("xai=https://api.x.ai/v1/")
	if err != nil || n != "xai" || p.BaseURL != "https://api.x.ai/v1" || p.NoTools {
		t.Fatal(n, p, err)
	}
	if _, p, err := ParseProvider("local=http://127.0.0.1:8080/v1,no-tools"); err != nil || !p.NoTools {
		t.Fatal(p, err)
	}
	for _, bad := range []string{"xai", "=http://x", "x=ftp://h", "x=http://h,tools", "a:b=http://h", "x=http://h/v1?k=1"} {
		if _, _, err := ParseProvider(bad); err == nil {
			t.Errorf("ParseProvider(%q) accepted", bad)
		}
	}
	pr, err := ParsePrices([]byte(`{"grok-4.3":{"input":3,"output":15}}`))
	if err != nil || pr["grok-4.3"] != (Price{3, 15}) {
		t.Fatal(pr, err)
	}
	if c := pr["grok-4.3"].cost(usage{PromptTokens: 1000, CompletionTokens: 100}); c != 0.0045 {
		t.Fatalf("cost %v", c)
	}
	for _, bad := range []string{`{"m":{"inptu":1}}`, `{"m":{"input":-1}}`, `[]`, `{} x`} {
		if _, err := ParsePrices([]byte(bad)); err == nil {
			t.Errorf("ParsePrices(%s) accepted", bad)
		}
	}
}

func TestResolve(t *testing.T) {
	r := New(Config{Providers: map[string]Provider{"xai": {BaseURL: "http://x/v1"}, "gw": {BaseURL: "http://g/compat"}}, DefaultProvider: "xai"})
	cases := map[string][3]string{
		"grok-4.3":               {"xai", "grok-4.3", "http://x/v1/chat/completions"},
		"gw:openai/gpt-4.1-mini": {"gw", "openai/gpt-4.1-mini", "http://g/compat/chat/completions"},
		"ft:gpt-4o:org:abc":      {"xai", "ft:gpt-4o:org:abc", "http://x/v1/chat/completions"},
		"xai:grok-4.3":           {"xai", "grok-4.3", "http://x/v1/chat/completions"},
	}
	for target, want := range cases {
		ep, fail := r.resolve(target)
		if fail != nil || ep.name != want[0] || ep.model != want[1] || ep.url != want[2] {
			t.Errorf("resolve(%q) = %+v %q", target, ep, fail)
		}
	}
	if _, fail := r.resolve(" "); !strings.HasPrefix(fail.String(), "ERR:agent:bad_target:empty") {
		t.Error(fail)
	}
	noDefault := New(Config{Providers: map[string]Provider{"a": {BaseURL: "http://a"}, "b": {BaseURL: "http://b"}}})
	if _, fail := noDefault.resolve("grok-4.3"); !strings.HasPrefix(fail.String(), "ERR:agent:no_provider:grok-4.3 — no default provider") || !strings.Contains(fail.String(), "a, b") {
		t.Error(fail)
	}
	if one := New(Config{Providers: map[string]Provider{"only": {BaseURL: "http://o"}}}); one.defaultProvider != "only" {
		t.Error("a lone provider is the default")
	}
	if _, fail := New(Config{}).resolve("m"); !strings.Contains(fail.String(), "--model-provider") {
		t.Error(fail)
	}
}

func TestBackoff(t *testing.T) {
	r := New(Config{RetryBase: 100 * time.Millisecond, RetryMax: time.Second})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for attempt, hi := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		hi *= time.Millisecond
		if hi > time.Second {
			hi = time.Second
		}
		for range 50 {
			d, ok := r.backoff(attempt, nil, now)
			if !ok || d < hi/2 || d > hi {
				t.Fatalf("attempt %d: %v not in [%v,%v]", attempt, d, hi/2, hi)
			}
		}
	}
	h := func(k, v string) map[string][]string { return map[string][]string{k: {v}} }
	if d, ok := r.backoff(0, h("Retry-After", "0.5"), now); !ok || d < 500*time.Millisecond || d > 550*time.Millisecond {
		t.Fatal(d, ok)
	}
	if d, ok := r.backoff(0, h("Retry-After-Ms", "20"), now); !ok || d < 20*time.Millisecond || d > 22*time.Millisecond {
		t.Fatal(d, ok)
	}
	if d, ok := r.backoff(0, h("Retry-After", now.Format(http.TimeFormat)), now); !ok || d != 0 {
		t.Fatal(d, ok)
	}
	if _, ok := r.backoff(0, h("Retry-After", now.Add(5*time.Second).Format(http.TimeFormat)), now); ok {
		t.Fatal("a dated Retry-After over the cap is not waited for")
	}
	if _, ok := r.backoff(0, h("Retry-After", "30"), now); ok {
		t.Fatal("a Retry-After over the cap is not waited for")
	}
	if _, ok := r.backoff(0, h("Retry-After", "1e300"), now); ok {
		t.Fatal("huge Retry-After")
	}
}
