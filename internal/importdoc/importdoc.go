// Package importdoc is what every importer (internal/openapi for OpenAPI
// operations, internal/mcpimport for MCP tools) writes the same way into the
// rows it makes: the key from an operation's or tool's name, and the sample
// arguments of a row's # EX line from its input schema.
//
//	key := prefix + importdoc.Key("issues/list-for-repo") // ISSUES_LIST_FOR_REPO
//	ex := importdoc.Sample(map[string]any{"type": "integer"}) // "1"
//	what := importdoc.FirstSentence(description)           // for # WHAT
//
// It depends on the standard library only, so each importer stays as light
// as its own input needs (the worker builds internal/mcpimport, not the
// OpenAPI parser).
package importdoc

import (
	"encoding/json"
	"regexp"
	"strings"
)

var (
	camel        = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	nonWord      = regexp.MustCompile(`[^A-Za-z0-9]+`)
	conventional = regexp.MustCompile(`^[A-Z0-9][A-Z0-9_]*$`)
)

// Key puts a name (an operationId, METHOD_path, an MCP tool's name) in the
// directory's key convention: addPet and add-pet are ADD_PET,
// issues/list-for-repo is ISSUES_LIST_FOR_REPO, create_issue is
// CREATE_ISSUE. A name that already is a key in that convention (uppercase
// letters, digits, '_') is kept as it is. The caller adds its prefix and
// checks the result (rowcall.ValidKey): Key does not cap the length.
func Key(name string) string {
	if conventional.MatchString(name) {
		return name
	}
	k := camel.ReplaceAllString(name, "${1}_${2}")
	k = strings.Trim(nonWord.ReplaceAllString(k, "_"), "_")
	return strings.ToUpper(k)
}

// Sample is an argument that the property's schema (a decoded JSON Schema
// object) accepts: its first enum value or its default, else a value of its
// type (1, true, [sample of items], {} or x).
func Sample(s map[string]any) string {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return text(enum[0])
	}
	if d, ok := s["default"]; ok && d != nil {
		if t := text(d); t != "" {
			return t
		}
	}
	switch firstType(s) {
	case "integer", "number":
		return "1"
	case "boolean":
		return "true"
	case "array":
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return "[]"
		}
		b, _ := json.Marshal([]any{jsonSample(items)})
		return string(b)
	case "object":
		return "{}"
	}
	return "x"
}

// FirstSentence is s up to its first ". " (the period kept), or all of s.
func FirstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func jsonSample(s map[string]any) any {
	v := Sample(s)
	var x any
	if t := firstType(s); t != "string" && t != "" && json.Unmarshal([]byte(v), &x) == nil {
		return x
	}
	return v
}

// firstType is a schema's type, or the first of its types.
func firstType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []string:
		if len(t) > 0 {
			return t[0]
		}
	case []any:
		if len(t) > 0 {
			f, _ := t[0].(string)
			return f
		}
	}
	return ""
}

func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
