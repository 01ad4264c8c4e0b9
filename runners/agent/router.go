package agent

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/internal/typed"
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
		return rowcall.Fail("agent", "not_allowed", key).Because("this agent's allowed_categories is empty, so it may call no rows; nothing ran").String()
	}
	return rowcall.Fail("agent", "not_allowed", key).Because("this agent may call only rows in the categories " + strings.Join(a.Categories, ", ") +
		" (its allowed_categories), and " + key + " is not one of them; nothing ran").String()
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

// FunctionTool is a row as the function tool an agent row offers a model:
// its name (the key; ToolName says whether the key can be one), description
// and JSON Schema parameters. GET /api/openapi.json?format=openai-tools and
// anthropic-tools write the same three values in each API's shape.
func FunctionTool(row *rowcall.Row) (name, description string, parameters json.RawMessage) {
	t := projectTool(row)
	return t.Function.Name, t.Function.Description, t.Function.Parameters
}

// ToolName reports whether key can be a function tool's name
// (^[a-zA-Z0-9_-]{1,64}$, in the OpenAI and Anthropic APIs alike).
func ToolName(key string) bool { return toolName(key) }

// maxDescription caps a tool's description.
const maxDescription = 1000

// projectTool is a row as a function tool: typed from its input_schema when
// that is a JSON Schema object with properties, otherwise one string "args"
// parameter carrying the row's pipe-separated argument string.
func projectTool(row *rowcall.Row) tool {
	desc := row.Description()
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

// schemaParams returns input_schema as tool parameters when it takes named
// arguments (typed.Named: the typed projection), its property order kept.
func schemaParams(schema string) (json.RawMessage, bool) {
	if _, ok := typed.Named(schema); !ok {
		return nil, false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(schema)) != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// ToolBody turns a tool call's JSON arguments into the row's argument
// string by the one rule every caller uses (typed.Body): with a typed
// input_schema the values in declared property order, otherwise the one
// string argument "args". err is a message for the model (a name the row does
// not take, a '|' that would shift later arguments, arguments that are not a
// JSON object).
func ToolBody(row *rowcall.Row, arguments string) (string, error) {
	return typed.Body(row.InputSchema, json.RawMessage(arguments))
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
