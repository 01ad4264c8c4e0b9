package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
)

// ReplyTag is the tag that holds a model's answer to the user. It is never a
// call, and tags inside it are text.
const ReplyTag = "REPLY"

// Tag is one [KEY]args[/KEY] call found in a model's text.
type Tag struct {
	Key  string
	Args string // the text between the tags, surrounding white space trimmed
}

// Tags returns the calls in a model's text, in order: every [KEY]…[/KEY]
// where KEY follows rowcall.KeyRule and is closed by the first [/KEY] after
// it. Text inside [REPLY]…[/REPLY] is not searched, an opening tag with no
// closing tag is text (so "[1]" or "[note]" in prose calls nothing), and a
// tag's args are taken whole, so tags nested in them are not calls of their
// own.
func Tags(s string) []Tag {
	var tags []Tag
	for i := 0; i < len(s); {
		open := strings.IndexByte(s[i:], '[')
		if open < 0 {
			break
		}
		open += i
		end := strings.IndexByte(s[open:], ']')
		if end < 0 {
			break
		}
		end += open
		key := s[open+1 : end]
		if !rowcall.ValidKey(key) {
			i = open + 1
			continue
		}
		closing := "[/" + key + "]"
		c := strings.Index(s[end+1:], closing)
		if c < 0 {
			i = open + 1
			continue
		}
		c += end + 1
		if key != ReplyTag {
			tags = append(tags, Tag{Key: key, Args: strings.TrimSpace(s[end+1 : c])})
		}
		i = c + len(closing)
	}
	return tags
}

// Allowed is a parsed allowed_categories column.
type Allowed struct {
	All        bool     // "*"
	Categories []string // otherwise: exact category names
}

// ParseAllowed reads allowed_categories: "*" (alone or among others) allows
// every row; otherwise a comma-separated list of categories, each trimmed and
// matched exactly. Empty allows nothing.
func ParseAllowed(col string) Allowed {
	var a Allowed
	for _, c := range strings.Split(col, ",") {
		c = strings.TrimSpace(c)
		switch {
		case c == "":
		case c == "*":
			a.All = true
		default:
			a.Categories = append(a.Categories, c)
		}
	}
	if a.All {
		a.Categories = nil
	}
	return a
}

// Permits reports whether a row of category may be called.
func (a Allowed) Permits(category string) bool {
	if a.All {
		return true
	}
	for _, c := range a.Categories {
		if c == category {
			return true
		}
	}
	return false
}

// None reports whether nothing is allowed.
func (a Allowed) None() bool { return !a.All && len(a.Categories) == 0 }

func (a Allowed) String() string {
	if a.All {
		return "*"
	}
	return strings.Join(a.Categories, ",")
}

// refusal is the message the model gets for a call it may not make. It
// says the same whether the row exists or not, and never names the row's
// category, so an agent cannot probe the directory beyond its reach.
func (a Allowed) refusal(key string) string {
	if a.None() {
		return "ERR:agent:not_allowed:" + key + " — this agent's allowed_categories is empty, so it may call no rows; nothing ran"
	}
	return "ERR:agent:not_allowed:" + key + " — this agent may call only rows in the categories " + strings.Join(a.Categories, ", ") +
		" (its allowed_categories), and " + key + " is not one of them; nothing ran"
}

// toolName reports whether key can be a function name in the chat
// completions API (^[a-zA-Z0-9_-]{1,64}$); other keys are reachable by tag only.
func toolName(key string) bool {
	if key == "" || len(key) > 64 {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// maxDescription caps a tool's description.
const maxDescription = 1000

// projectTool is a row as a function tool: typed from its input_schema when
// that is a JSON Schema object with properties, otherwise one string "args"
// parameter carrying the row's pipe-separated argument string.
func projectTool(row *rowcall.Row) tool {
	desc := row.DocLine("WHAT")
	if desc == "" {
		desc = firstLine(row.Content)
	}
	if w := row.DocLine("WHEN_TO_USE"); w != "" {
		desc += " When to use: " + w
	}
	params, typed := schemaParams(row.InputSchema)
	if !typed {
		argDoc := "The row's argument string: values separated by '|'."
		if a := row.DocLine("ARGS"); a != "" {
			argDoc += " ARGS: " + a
		}
		params, _ = json.Marshal(map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"args": map[string]any{"type": "string", "description": argDoc}},
			"required":             []string{"args"},
			"additionalProperties": false,
		})
	}
	return tool{Type: "function", Function: toolFunction{Name: row.Key, Description: redact.Clip(oneLine(desc), maxDescription, nil), Parameters: params}}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		if l != "" {
			return l
		}
	}
	return ""
}

// schemaParams returns input_schema as tool parameters when it is a JSON
// object whose "properties" is an object (the typed projection), and the
// order its properties are declared in.
func schemaParams(schema string) (json.RawMessage, bool) {
	if _, ok := schemaOrder(schema); !ok {
		return nil, false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(schema)) != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// schemaOrder returns the property names of a JSON Schema object in the
// order they are written.
func schemaOrder(schema string) ([]string, bool) {
	schema = strings.TrimSpace(schema)
	if schema == "" {
		return nil, false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(schema), &top) != nil {
		return nil, false
	}
	props, ok := top["properties"]
	if !ok {
		return nil, false
	}
	keys, _, err := objectInOrder(props)
	if err != nil || len(keys) == 0 {
		return nil, false
	}
	return keys, true
}

// objectInOrder decodes a JSON object into its keys in written order and
// their raw values.
func objectInOrder(raw []byte) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if dec.More() {
		return nil, nil, errors.New("text after the JSON object")
	}
	return keys, vals, nil
}

// ToolBody turns a tool call's JSON arguments into the row's argument
// string. With a typed input_schema the values are taken in the schema's
// declared property order (the inverse of mapping pipe arguments to
// properties), a missing one as ""; without one, the "args" string is the
// body, or, when the model sent other names, their values in the order it
// wrote them. A string value is used as it is, null as "", anything else as
// its JSON text; trailing empty values are dropped. err is a message for the
// model when arguments is not a JSON object.
func ToolBody(row *rowcall.Row, arguments string) (string, error) {
	if strings.TrimSpace(arguments) == "" {
		arguments = "{}"
	}
	keys, vals, err := objectInOrder([]byte(arguments))
	if err != nil {
		return "", errors.New("the arguments are not a JSON object: " + err.Error())
	}
	order, typed := schemaOrder(row.InputSchema)
	if !typed {
		if v, ok := vals["args"]; ok {
			return scalar(v), nil
		}
		order = keys
	}
	parts := make([]string, len(order))
	for i, k := range order {
		if v, ok := vals[k]; ok {
			parts[i] = scalar(v)
		}
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, "|"), nil
}

// scalar is a JSON value as argument text.
func scalar(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	t := strings.TrimSpace(string(v))
	if t == "null" {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) == nil {
		return buf.String()
	}
	return t
}

// rankTools orders candidate rows for projection: visible, enabled, not the
// agent itself, with a usable name, by planner_rank then key, each key once,
// at most max.
func rankTools(rows []rowcall.Row, self string, max int) []rowcall.Row {
	seen := map[string]bool{}
	var out []rowcall.Row
	for _, r := range rows {
		if r.Key == self || r.Enabled == 0 || r.PlannerVisible == 0 || !toolName(r.Key) || seen[r.Key] {
			continue
		}
		seen[r.Key] = true
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].PlannerRank != out[j].PlannerRank {
			return out[i].PlannerRank < out[j].PlannerRank
		}
		return out[i].Key < out[j].Key
	})
	if len(out) > max {
		out = out[:max]
	}
	return out
}
