package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/typed"
)

// MaxValue is the largest value (and the largest whole row) the directory takes:
// D1's cap on a string, BLOB or row, enforced on every backend.
const MaxValue = 2_000_000

// field decodes one writable column from JSON into a row.
type field func(r *rowcall.Row, raw json.RawMessage) error

// writable lists the sixteen columns a caller may write, with their decoders.
// It is PATCH's allow-list (the seed's thirteen plus sensitive, runner,
// approval and output_schema) and
// what POST and PUT accept besides key.
var writable = map[string]field{
	"type": func(r *rowcall.Row, raw json.RawMessage) error {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || !rowcall.Type(s).Valid() {
			return fmt.Errorf("type must be one of fn, http, agent, flow; got %s", clip(raw))
		}
		r.Type = rowcall.Type(s)
		return nil
	},
	"target":             text("target", func(r *rowcall.Row) *string { return &r.Target }),
	"auth":               text("auth", func(r *rowcall.Row) *string { return &r.Auth }),
	"content":            text("content", func(r *rowcall.Row) *string { return &r.Content }),
	"category":           text("category", func(r *rowcall.Row) *string { return &r.Category }),
	"allowed_categories": text("allowed_categories", func(r *rowcall.Row) *string { return &r.AllowedCategories }),
	"runner":             text("runner", func(r *rowcall.Row) *string { return &r.Runner }),
	"includes":           text("includes", func(r *rowcall.Row) *string { return &r.Includes }),
	"seq": func(r *rowcall.Row, raw json.RawMessage) error {
		if isNull(raw) {
			r.Seq = nil
			return nil
		}
		n, err := integer("seq", raw)
		r.Seq = &n
		return err
	},
	"planner_rank": func(r *rowcall.Row, raw json.RawMessage) error {
		if isNull(raw) {
			r.PlannerRank = 100
			return nil
		}
		n, err := integer("planner_rank", raw)
		r.PlannerRank = n
		return err
	},
	"enabled":         flag(func(r *rowcall.Row) *int64 { return &r.Enabled }, 1),
	"planner_visible": flag(func(r *rowcall.Row) *int64 { return &r.PlannerVisible }, 1),
	"sensitive":       flag(func(r *rowcall.Row) *int64 { return &r.Sensitive }, 0),
	"approval":        flag(func(r *rowcall.Row) *int64 { return &r.Approval }, 0),
	"input_schema": jsonText("input_schema", func(r *rowcall.Row) *string { return &r.InputSchema }, func(v any) error {
		if _, ok := v.(map[string]any); !ok {
			return fmt.Errorf("input_schema must be a JSON Schema object, e.g. {\"type\":\"object\",\"properties\":{…}}")
		}
		b, _ := json.Marshal(v)
		_, err := typed.Compile(string(b))
		return err
	}),
	"output_schema": jsonText("output_schema", func(r *rowcall.Row) *string { return &r.OutputSchema }, func(v any) error {
		m, ok := v.(map[string]any)
		if !ok || m["type"] != "object" {
			return fmt.Errorf("output_schema must be a JSON Schema object of type \"object\" (what the row's result, read as JSON, conforms to), e.g. {\"type\":\"object\",\"properties\":{…}}")
		}
		b, _ := json.Marshal(v)
		_, err := typed.CompileOutput(string(b))
		return err
	}),
	"examples": jsonText("examples", func(r *rowcall.Row) *string { return &r.Examples }, func(v any) error {
		list, ok := v.([]any)
		if ok {
			for _, e := range list {
				if _, ok = e.(string); !ok {
					break
				}
			}
		}
		if !ok {
			return fmt.Errorf(`examples must be a JSON array of argument strings, e.g. ["37.77|-122.42"]`)
		}
		return nil
	}),
}

// readOnly fields may appear in a POST or PUT body (a row read back and sent
// again, an export imported) and are ignored there; key in the body must match
// the path. imported_from is the import's to set (rowcall.ImportMayReplace):
// a body that names it claims nothing, and the stored row keeps its own.
// written_by is the host's to set, from the caller (rowcall.WithWriter).
var readOnly = map[string]bool{"key": true, "updated_at": true, "created_at": true, "version": true, "row_num": true, "imported_from": true,
	"written_by": true}

// writableNames is the allow-list, sorted, for error messages.
var writableNames = func() string {
	var n []string
	for k := range writable {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}()

func text(name string, at func(*rowcall.Row) *string) field {
	return func(r *rowcall.Row, raw json.RawMessage) error {
		var s string
		if !isNull(raw) {
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
		}
		return set(name, at(r), s)
	}
}

// set stores a decoded text value, refusing one over MaxValue bytes: its stored
// bytes, which is what D1 limits, not its JSON spelling (a quote sent as \"
// counts one byte).
func set(name string, at *string, s string) error {
	if len(s) > MaxValue {
		return tooLarge(name)
	}
	*at = s
	return nil
}

func flag(at func(*rowcall.Row) *int64, def int64) field {
	return func(r *rowcall.Row, raw json.RawMessage) error {
		switch string(bytes.TrimSpace(raw)) {
		case "null":
			*at(r) = def
		case "0", "false":
			*at(r) = 0
		case "1", "true":
			*at(r) = 1
		default:
			return fmt.Errorf("must be 0 or 1 (or false/true); got %s", clip(raw))
		}
		return nil
	}
}

// jsonText takes a column stored as JSON text, given either as that text (the
// seed sends "examples":"[\"37.77|-122.42\"]") or as the JSON value itself.
func jsonText(name string, at func(*rowcall.Row) *string, check func(any) error) field {
	return func(r *rowcall.Row, raw json.RawMessage) error {
		if isNull(raw) {
			*at(r) = ""
			return nil
		}
		doc := []byte(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if strings.TrimSpace(s) == "" {
				*at(r) = ""
				return nil
			}
			doc = []byte(s)
		}
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			return fmt.Errorf("is not valid JSON: %v", err)
		}
		if err := check(v); err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, doc); err != nil {
			return err
		}
		return set(name, at(r), buf.String())
	}
}

func integer(name string, raw json.RawMessage) (int64, error) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("must be an integer or null; got %s", clip(raw))
	}
	return n, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// clip shows a JSON value in an error message without echoing a huge one.
func clip(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// apply decodes the named fields of obj into r. Unknown names are collected, not
// applied; a bad value stops with an error naming its field.
func apply(r *rowcall.Row, obj map[string]json.RawMessage, allowReadOnly bool) (known int, unknown []string, err error) {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		raw := obj[name]
		dec, ok := writable[name]
		if !ok {
			if !(allowReadOnly && readOnly[name]) {
				unknown = append(unknown, name)
			}
			continue
		}
		if err := dec(r, raw); err != nil {
			if re, ok := err.(*rowcall.Error); ok { // too large
				return known, unknown, re
			}
			msg := err.Error()
			if _, isJSON := err.(*json.UnmarshalTypeError); isJSON {
				msg = "must be a string or null; got " + clip(raw)
			}
			return known, unknown, &rowcall.Error{Code: rowcall.EInvalid, Message: name + " " + strings.TrimPrefix(msg, name+" "),
				HowToFix: "fix the value of " + name + " and resend; nothing was changed", Extra: map[string]any{"field": name}}
		}
		known++
	}
	return known, unknown, nil
}

func tooLarge(name string) error {
	return &rowcall.Error{Code: rowcall.ETooLarge, Message: fmt.Sprintf("%s is over %d bytes, the largest value or row the directory stores (D1's limit)", name, MaxValue),
		HowToFix: "keep large payloads out of the row (a fn module, or an upstream the row calls)", Extra: map[string]any{"field": name}}
}

// rowSize is the stored size of a row, checked against MaxValue.
func rowSize(r *rowcall.Row) int {
	return len(r.Key) + len(r.Type) + len(r.Target) + len(r.Auth) + len(r.Content) + len(r.Category) +
		len(r.AllowedCategories) + len(r.InputSchema) + len(r.OutputSchema) + len(r.Examples) + len(r.Runner) + len(r.Includes) + 64
}
