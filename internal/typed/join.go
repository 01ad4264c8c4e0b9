package typed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Join is the inverse of the mapping Check reads: it turns a JSON object of
// named arguments into the pipe-separated body, one argument per top-level
// property in declared order. Callers use Body, which calls it for a row
// whose schema takes named arguments.
//
// A value is written as Check reads it back: a string as it is, a number as
// its JSON text (exactly, never through a float), a boolean as true/false, an
// object or array as compact JSON, null as "null" where the property takes
// JSON (an object or array type) and as "" elsewhere. Trailing properties that are
// absent are left off, so "required" still catches them; an absent property
// before a present one becomes an empty argument (a body cannot skip a
// position). Refused, with a message for the caller: arguments that are not
// an object, a name the schema does not declare (a positional body has no
// place for it), and a '|' in any value except the last property's when it is
// a string (Check gives that one the rest of the body, pipes included; in any
// other position a '|' would shift every later argument).
func (s *Schema) Join(arguments json.RawMessage) (string, error) {
	obj, err := decodeObject(arguments)
	if err != nil {
		return "", err
	}
	known := map[string]bool{}
	for _, p := range s.props {
		known[p.name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) { // in order: the same refusal every time
		if !known[name] {
			return "", fmt.Errorf("unknown argument %q: the arguments are %s", name, s.names())
		}
	}
	last := -1 // the last property given
	for i, p := range s.props {
		if _, ok := obj[p.name]; ok {
			last = i
		}
	}
	parts := make([]string, 0, last+1)
	for i := 0; i <= last; i++ {
		p := s.props[i]
		v, err := text(obj[p.name], p.is("object") || p.is("array"))
		if err != nil {
			return "", fmt.Errorf("argument %q: %v", p.name, err)
		}
		if strings.Contains(v, "|") && (i != len(s.props)-1 || !p.is("string")) {
			return "", fmt.Errorf("argument %q contains '|', which separates arguments; only the last argument, when it is a string, may contain it", p.name)
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "|"), nil
}

// Names returns the schema's top-level property names in declared order: the
// positions of the pipe-separated arguments.
func (s *Schema) Names() []string {
	out := make([]string, len(s.props))
	for i, p := range s.props {
		out[i] = p.name
	}
	return out
}

func (s *Schema) names() string {
	if len(s.props) == 0 {
		return "none (input_schema declares no properties)"
	}
	return strings.Join(s.Names(), ", ") + " (in this order)"
}

// decodeObject reads a JSON object keeping numbers exact; empty or null is {}.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return map[string]json.RawMessage{}, nil
	}
	var obj map[string]json.RawMessage
	if t[0] != '{' || json.Unmarshal(t, &obj) != nil {
		return nil, ErrNotObject
	}
	return obj, nil
}

// text is one argument's body text; asJSON says the property is read as JSON.
func text(raw json.RawMessage, asJSON bool) (string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "", nil
	}
	switch t[0] {
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return "", err
		}
		return s, nil
	case 'n':
		if asJSON {
			return "null", nil
		}
		return "", nil
	case '{', '[':
		var b bytes.Buffer
		if err := json.Compact(&b, t); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	// A number or a boolean: its JSON text is what Check reads back.
	var x any
	if err := json.Unmarshal(t, &x); err != nil {
		return "", err
	}
	return string(t), nil
}
