package typed

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/internal/args"
)

func TestJoin(t *testing.T) {
	s, err := Compile(weather) // latitude, longitude, note
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args, body, err string // err: a substring of Join's error
	}{
		{`{"latitude":37.77,"longitude":-122.42}`, "37.77|-122.42", ""},
		{`{"longitude":-122.42,"latitude":37.77}`, "37.77|-122.42", ""}, // declared order, not the object's
		{`{"latitude":37.77,"longitude":-122.42,"note":"a|b|c"}`, "37.77|-122.42|a|b|c", ""},
		{`{"latitude":"37.77","longitude":1e2}`, "37.77|1e2", ""},
		{`{"latitude":37.77,"note":"x"}`, "37.77||x", ""}, // a gap is an empty argument
		{`{"latitude":37.77,"longitude":null}`, "37.77|", ""},
		{`{}`, "", ""},
		{``, "", ""},
		{`null`, "", ""},
		{`{"latitude":"1|2","longitude":3}`, "", `"latitude" contains '|'`},
		{`{"latitude":1,"colour":"red"}`, "", `unknown argument "colour": the arguments are latitude, longitude, note (in this order)`},
		{`[1,2]`, "", "not a JSON object"},
		{`"37.77|-122.42"`, "", "not a JSON object"},
	} {
		body, err := s.Join(json.RawMessage(c.args))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %q, %v; want error %q", c.args, body, err, c.err)
			}
			continue
		}
		if err != nil || body != c.body {
			t.Errorf("%s: %q, %v; want %q", c.args, body, err, c.body)
		}
	}
}

// Join and Check are inverses: what Join writes, Check reads back as the same
// object, for every type Check converts.
func TestJoinRoundTrip(t *testing.T) {
	schema := `{"type":"object","properties":{"n":{"type":"integer"},"f":{"type":"number"},"b":{"type":"boolean"},` +
		`"o":{"type":"object"},"l":{"type":["array","null"]},"s":{"type":"string"}},` +
		`"required":["n","f","b","o","l","s"],"additionalProperties":false}`
	s, err := Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	in := `{"s":"rest | with | pipes","l":[1,"two",{"x":null}],"o":{"k":{"deep":[true]}},"b":false,"f":-0.000123456789012345678,"n":12345678901234567890}`
	body, err := s.Join(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `12345678901234567890|-0.000123456789012345678|false|{"k":{"deep":[true]}}|[1,"two",{"x":null}]|rest | with | pipes`
	if body != want {
		t.Fatalf("body %q\nwant %q", body, want)
	}
	if err := s.Check(args.Split(body)); err != nil {
		t.Fatalf("Check refused what Join wrote: %v", err)
	}
	// null round-trips where the property takes JSON.
	if body, err = s.Join(json.RawMessage(`{"n":1,"f":1,"b":true,"o":{},"l":null,"s":""}`)); err != nil || body != `1|1|true|{}|null|` {
		t.Fatalf("null: %q %v", body, err)
	}
	if err := s.Check(args.Split(body)); err != nil {
		t.Fatalf("Check refused null: %v", err)
	}
	// A wrong type still reaches the validator, which names the property.
	body, err = s.Join(json.RawMessage(`{"n":"twelve","f":1,"b":true,"o":{},"l":null,"s":""}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(args.Split(body)); err == nil || !strings.Contains(err.Error(), "/n") {
		t.Fatalf("a string for an integer: %v", err)
	}
	if got := strings.Join(s.Names(), ","); got != "n,f,b,o,l,s" {
		t.Fatalf("Names %s", got)
	}
	// A pipe inside a JSON value that is not last is refused, not split.
	if _, err := s.Join(json.RawMessage(`{"n":1,"f":1,"b":true,"o":{"k":"a|b"}}`)); err == nil {
		t.Fatal("a pipe inside an object argument was accepted")
	}
}
