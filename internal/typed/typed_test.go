package typed

import (
	"strings"
	"testing"
)

const weather = `{"type":"object","properties":{"latitude":{"type":"number","minimum":-90,"maximum":90},"longitude":{"type":"number","minimum":-180,"maximum":180},"note":{"type":"string"}},"required":["latitude","longitude"],"additionalProperties":false}`

func TestCheck(t *testing.T) {
	s, err := Compile(weather)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string // "" = valid; else a substring of the error
	}{
		{[]string{"37.77", "-122.42"}, ""},
		{[]string{"37.77", "-122.42", "a note"}, ""},
		{[]string{"37.77", "-122.42", "a", "b|c"}, ""}, // the last string property takes the rest
		{[]string{"north", "-122.42"}, "at /latitude"},
		{[]string{"123", "-122.42"}, "at /latitude"},
		{[]string{"37.77"}, "longitude"},
		{[]string{""}, "latitude"},
	} {
		err := s.Check(c.args)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestTypes(t *testing.T) {
	s, err := Compile(`{"type":"object","properties":{"n":{"type":"integer"},"b":{"type":"boolean"},"o":{"type":"object","required":["k"]},"l":{"type":["array","null"]}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check([]string{"3", "true", `{"k":1}`, `[1,2]`}); err != nil {
		t.Fatal(err)
	}
	if err := s.Check([]string{"3.5"}); err == nil || !strings.Contains(err.Error(), "/n") {
		t.Fatalf("3.5 as integer: %v", err)
	}
	if err := s.Check([]string{"3", "yes"}); err == nil || !strings.Contains(err.Error(), "/b") {
		t.Fatalf("yes as boolean: %v", err)
	}
	if err := s.Check([]string{"3", "true", `{"x":1}`}); err == nil || !strings.Contains(err.Error(), "/o") {
		t.Fatalf("object without k: %v", err)
	}
}

func TestCompileRefusesBadSchemas(t *testing.T) {
	for _, bad := range []string{`{"type":"objekt"}`, `{"properties":[]}`, `not json`, `{"minimum":"x"}`} {
		if _, err := Compile(bad); err == nil {
			t.Errorf("%s compiled", bad)
		}
	}
}

// A refused call names where the argument is and what is wrong with it, one
// line; a refused schema names the place in the schema.
func TestMessages(t *testing.T) {
	s, err := Compile(`{"type":"object","properties":{"lat":{"type":"number","maximum":90},"o":{"type":"object","required":["k"]},"l":{"type":"array","items":{"type":"integer"}},"e":{"enum":["x","y"]},"any":{"anyOf":[{"type":"integer"},{"type":"boolean"}]}},"required":["lat"]}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"north"}, `at /lat: type: north has type "string", want "number"`},
		{[]string{"90.5"}, `at /lat: maximum: 90.5 is greater than 90`},
		{[]string{""}, `at /: required: missing properties: ["lat"]`},
		{[]string{"1", `{"x":1}`}, `at /o: required: missing properties: ["k"]`},
		{[]string{"1", `{"k":1}`, `[1,"a"]`}, `at /l (schema /properties/l/items): type: a has type "string", want "integer"`},
		{[]string{"1", `{"k":1}`, `[1]`, "z"}, `at /e: enum: z does not equal any of: [x y]`},
		{[]string{"1", `{"k":1}`, `[1]`, "x", "s"}, `at /any: anyOf: none of its 2 schemas matched: type: s has type "string", want "integer"; type: s has type "string", want "boolean"`},
	} {
		if err := s.Check(c.args); err == nil || err.Error() != c.want {
			t.Errorf("%q: %v\n want %s", c.args, err, c.want)
		}
	}
	for schema, want := range map[string]string{
		`{"properties":{"a":{"type":"strin"}}}`:                                           `at /properties/a/type: anyOf: none of its 2 schemas matched: enum: strin does not equal any of`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"minimum":"x"}]}`: `at /items/0/minimum: type: x has type "string", want "number"`,
		`{"$schema":"http://json-schema.org/draft-04/schema#"}`:                           `is not a draft rowcall validates`,
		`{"pattern":"("}`: `pattern: error parsing regexp`,
	} {
		if _, err := Compile(schema); err == nil || !strings.HasPrefix(err.Error(), "input_schema is not a valid JSON Schema: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\n want %s", schema, err, want)
		}
	}
	// draft-07 is validated as draft-07: its tuple "items" is legal there.
	d7, err := Compile(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"type":"array","items":[{"type":"integer"}],"additionalItems":false}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := d7.Check([]string{"[1,2]"}); err == nil || !strings.HasPrefix(err.Error(), "at /p") {
		t.Errorf("draft-07 additionalItems: %v", err)
	}
}
