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
