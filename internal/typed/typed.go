// Package typed checks a call against its row's input_schema before anything
// runs (beyond the seed, which has no types at the door).
//
// The rule: the call's pipe-separated arguments are mapped, in order, onto the
// schema's top-level "properties" in the order they are declared. An argument
// is read as the property's type says: "integer"/"number" from a decimal
// number, "boolean" from true/false, "object"/"array" from JSON text, anything
// else as the string it is (a value that does not convert stays a string, so
// the validator reports the type). A missing argument leaves its property out,
// so "required" catches it. When there are more arguments than properties and
// the last property is a string, it takes the rest with the pipes put back (the
// seed's $N+ rule); otherwise extras are discarded. The object is then validated
// with JSON Schema draft 2020-12 (github.com/santhosh-tekuri/jsonschema/v6), and
// a failing call is refused with the validator's message.
//
// Compile a row's input_schema once and Check each call's arguments against
// it. Schema.Join goes the other way, from named arguments (a JSON object) to
// the pipe-separated body, for MCP's tools.
package typed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled input_schema with its properties in declared order.
type Schema struct {
	compiled *jsonschema.Schema
	props    []property
	object   bool // "type" is absent or "object": the schema can take named arguments
}

type property struct {
	name  string
	types []string
}

// MaxCached is how many compiled schemas Compile keeps (schema text →
// *Schema), the least recently used dropped first: a directory's schemas stay
// compiled, and a stream of new or edited schemas cannot grow memory without
// bound.
const MaxCached = 1024

var cache = mustLRU(MaxCached)

func mustLRU(n int) *lru.Cache[string, *Schema] {
	c, err := lru.New[string, *Schema](n)
	if err != nil {
		panic(err)
	}
	return c
}

// Compile compiles a schema (cached by its text, at most MaxCached).
func Compile(text string) (*Schema, error) {
	if s, ok := cache.Get(text); ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("input_schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("input_schema.json", doc); err != nil {
		return nil, err
	}
	compiled, err := c.Compile("input_schema.json")
	if err != nil {
		return nil, fmt.Errorf("input_schema is not a valid JSON Schema: %s", flatten(err))
	}
	props, object, err := properties(text)
	if err != nil {
		return nil, err
	}
	s := &Schema{compiled: compiled, props: props, object: object}
	cache.Add(text, s)
	return s, nil
}

// Check maps args onto the schema and validates them. The error is the
// validator's message, made one line.
func (s *Schema) Check(args []string) error {
	if len(args) == 1 && args[0] == "" {
		args = nil
	}
	obj := map[string]any{}
	for i, p := range s.props {
		if i >= len(args) {
			break
		}
		v := args[i]
		if i == len(s.props)-1 && len(args) > len(s.props) && p.is("string") {
			v = strings.Join(args[i:], "|")
		}
		obj[p.name] = p.convert(v)
	}
	// Round-trip through the validator's own JSON reader so numbers are exact.
	b, _ := json.Marshal(obj)
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err := s.compiled.Validate(inst); err != nil {
		return fmt.Errorf("%s", flatten(err))
	}
	return nil
}

func (p property) is(t string) bool {
	if len(p.types) == 0 {
		return t == "string"
	}
	for _, x := range p.types {
		if x == t {
			return true
		}
	}
	return false
}

func (p property) convert(v string) any {
	switch {
	case p.is("integer") || p.is("number"):
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
		}
	case p.is("boolean"):
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			return b
		}
	case p.is("object") || p.is("array"):
		var x any
		if json.Unmarshal([]byte(v), &x) == nil {
			return json.RawMessage(v)
		}
	}
	return v
}

// properties reads the top-level "properties" keys in declared order, with
// their "type" (a string or a list), and whether the schema's own "type" is
// absent or "object".
func properties(text string) ([]property, bool, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &top); err != nil {
		return nil, false, fmt.Errorf("input_schema must be a JSON object: %v", err)
	}
	typ, ok := top["type"]
	object := !ok || string(bytes.TrimSpace(typ)) == `"object"`
	raw, ok := top["properties"]
	if !ok {
		return nil, object, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false, fmt.Errorf("input_schema's properties must be an object")
	}
	var out []property
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false, err
		}
		var def struct {
			Type any `json:"type"`
		}
		var body json.RawMessage
		if err := d.Decode(&body); err != nil {
			return nil, false, err
		}
		json.Unmarshal(body, &def)
		p := property{name: t.(string)}
		switch ty := def.Type.(type) {
		case string:
			p.types = []string{ty}
		case []any:
			for _, x := range ty {
				if s, ok := x.(string); ok {
					p.types = append(p.types, s)
				}
			}
		}
		out = append(out, p)
	}
	return out, object, nil
}

// flatten makes a validator error one readable line.
func flatten(err error) string {
	if ve, ok := err.(*jsonschema.ValidationError); ok {
		var parts []string
		collect(ve.DetailedOutput(), &parts)
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
	}
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "- "))
	}
	return strings.Join(lines, "; ")
}

func collect(u *jsonschema.OutputUnit, parts *[]string) {
	if u.Error != nil && len(u.Errors) == 0 {
		at := u.InstanceLocation
		if at == "" {
			at = "/"
		}
		*parts = append(*parts, fmt.Sprintf("at %s: %s", at, u.Error.String()))
	}
	for i := range u.Errors {
		collect(&u.Errors[i], parts)
	}
}
