package typed

import (
	"encoding/json"
	"strings"
	"testing"
)

// Body is the one rule for named arguments: every caller (MCP tools, the
// agent's native tool calls) gets the same body or the same refusal.
func TestBody(t *testing.T) {
	const named = `{"properties":{"latitude":{"type":"number"},"longitude":{"type":"number"},"note":{"type":"string"}}}`
	const arrayType = `{"type":"array","properties":{"a":{"type":"string"}}}`
	for _, c := range []struct {
		schema, args, body, err string // err: a substring of Body's error
	}{
		{named, `{"longitude":-122.42,"latitude":37.77}`, "37.77|-122.42", ""},
		{named, `{"latitude":1,"note":"a|b"}`, "1||a|b", ""}, // the last string takes pipes
		{named, `{"args":"1|2"}`, "1|2", ""},                 // positional on a typed row
		{named, ``, "", ""},
		{named, `{"latitude":"1|2","longitude":3}`, "", `argument "latitude" contains '|'`},
		{named, `{"latitude":1,"altitude":2}`, "", `unknown argument "altitude"`},
		{named, `[1]`, "", "the arguments are not a JSON object"},
		{"", `{"args":"37.77|-122.42"}`, "37.77|-122.42", ""},
		{"", `{"args":12}`, "12", ""},
		{"", `{"args":null}`, "", ""},
		{"", `null`, "", ""},
		{"", `{"args":["a"]}`, "", "args must be one string"},
		{"", `{"city":"Paris","days":3}`, "", `unknown argument "city": this capability takes one string argument, args`},
		{"", `{} {}`, "", "the arguments are not a JSON object"},
		{arrayType, `{"a":"x"}`, "", `unknown argument "a"`}, // not an object schema: args only
		{`{"type":"object"`, `{"args":"x"}`, "x", ""},        // does not compile: args only
	} {
		body, err := Body(c.schema, json.RawMessage(c.args))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: %q, %v; want error %q", c.schema, c.args, body, err, c.err)
			}
			continue
		}
		if err != nil || body != c.body {
			t.Errorf("%s %s: %q, %v; want %q", c.schema, c.args, body, err, c.body)
		}
	}
	if _, ok := Named(arrayType); ok {
		t.Error("an array schema takes named arguments")
	}
	if s, ok := Named(named); !ok || strings.Join(s.Names(), ",") != "latitude,longitude,note" {
		t.Error("Named")
	}
}
