package typed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Named returns the compiled schema when inputSchema can take named
// arguments: it compiles, it is an object schema (a missing "type" reads as
// "object"), and it declares top-level properties. Otherwise the row takes
// one string argument, args.
func Named(inputSchema string) (*Schema, bool) {
	if strings.TrimSpace(inputSchema) == "" {
		return nil, false
	}
	s, err := Compile(inputSchema)
	if err != nil || len(s.props) == 0 || !s.object {
		return nil, false
	}
	return s, true
}

// ErrNotObject is Body's refusal of arguments that are not a JSON object.
var ErrNotObject = errors.New("the arguments are not a JSON object")

// Body is the one rule that turns a call's named arguments (an MCP
// tools/call's or a model's tool call's JSON object) into the row's
// pipe-separated body. Every caller that takes named arguments uses it.
//
// For a row whose input_schema takes named arguments (Named), the values are
// joined in declared property order by Schema.Join, which refuses a name the
// schema does not declare and a '|' in any value but the last string
// property's (Check gives the last string the rest of the body, pipes
// included; anywhere else a '|' would shift every later argument). The one
// exception: {"args":"a|b"} alone, when the schema declares no property
// "args", is the positional body as it is. A row without such a schema takes
// one string argument, args (ArgsText); any other name is refused. Empty or
// null arguments are {}; anything else that is not a JSON object is
// ErrNotObject. The error is a message for the caller, who reports it as a
// refusal (nothing runs).
func Body(inputSchema string, arguments json.RawMessage) (string, error) {
	var obj map[string]json.RawMessage
	if t := bytes.TrimSpace(arguments); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if t[0] != '{' || json.Unmarshal(t, &obj) != nil {
			return "", ErrNotObject
		}
	}
	s, named := Named(inputSchema)
	if raw, ok := obj["args"]; ok && len(obj) == 1 && (!named || !slices.Contains(s.Names(), "args")) {
		return ArgsText(raw)
	}
	if named {
		return s.Join(arguments)
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) { // in order: the same refusal every time
		if k != "args" {
			return "", fmt.Errorf("unknown argument %q: this capability takes one string argument, args (its arguments separated by '|')", k)
		}
	}
	return "", nil
}

// ArgsText reads the positional argument args: a string as it is, a number
// or boolean as its JSON text, null as "". An object or array is refused.
func ArgsText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	t := string(bytes.TrimSpace(raw))
	if t == "null" {
		return "", nil
	}
	var x any
	if json.Unmarshal(raw, &x) == nil {
		switch x.(type) {
		case map[string]any, []any:
		default:
			return t, nil
		}
	}
	return "", errors.New(`args must be one string of '|'-separated arguments, e.g. "37.77|-122.42"`)
}
