package rowcall

import (
	"strings"
)

// Row is one capability: the directory table's columns plus version.
// Nullable text columns read back as "" (NULL and empty are the same to the
// dispatcher); Seq stays a pointer because "no pinned position" differs from 0.
type Row struct {
	Key               string `json:"key"`
	Type              Type   `json:"type"`
	Target            string `json:"target"`
	Auth              string `json:"auth"`
	Content           string `json:"content"`
	UpdatedAt         string `json:"updated_at"`
	Category          string `json:"category"`
	AllowedCategories string `json:"allowed_categories"`
	Seq               *int64 `json:"seq"`
	Enabled           int64  `json:"enabled"`
	PlannerVisible    int64  `json:"planner_visible"`
	PlannerRank       int64  `json:"planner_rank"`
	InputSchema       string `json:"input_schema"`
	// OutputSchema is what the row's result conforms to, when it declares
	// it: a JSON Schema object of type "object" (MCP's outputSchema).
	OutputSchema string `json:"output_schema"`
	Examples     string `json:"examples"`
	Sensitive    int64  `json:"sensitive"`
	Runner       string `json:"runner"`
	Includes     string `json:"includes"`
	CreatedAt    string `json:"created_at"`
	Version      int64  `json:"version"`
	RowNum       int64  `json:"row_num,omitempty"` // computed by the read path, never stored
	// ImportedFrom is the import that made the row (ImportMayReplace), ""
	// for a row written by hand or by a plain registry import.
	ImportedFrom string `json:"imported_from,omitempty"`
	// Approval 1: every call waits for a person's approval (rowcall.Approval).
	Approval int64 `json:"approval"`
	// WrittenBy is who wrote this version: the writer's actor (Principal.Actor:
	// owner:terminal-key, owner:bearer, person:per_…) or the host's own
	// (WriterExamples, WriterMCPSync). The directory's write path sets it from
	// the context (WithWriter), never from a row's body; "" for a row written
	// before the column existed. It is not part of the contract.
	WrittenBy string `json:"written_by,omitempty"`
}

// NewRow returns a row with the table's column defaults.
func NewRow(key string, typ Type) Row {
	return Row{Key: key, Type: typ, Enabled: 1, PlannerVisible: 1, PlannerRank: 100}
}

// KeyRule is the key rule, written once: 1 to 128 characters, letters, digits,
// '_', '-' and '.', starting with a letter or digit. Keys appear in URLs and in
// [KEY]…[/KEY] tags, so nothing else is allowed. Uppercase is the convention.
const KeyRule = "1-128 characters: letters, digits, '_', '-' or '.', starting with a letter or digit (uppercase by convention, e.g. GROK_MODELS)"

// ValidKey reports whether key follows KeyRule: ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$,
// written out (every request that names a key checks it, and that regexp's
// 128 repetitions were the root package's whole init: 1,700 allocations).
func ValidKey(key string) bool {
	if len(key) == 0 || len(key) > 128 {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// Payload is content with its documentation stripped: every line whose first
// non-blank character is '#' is documentation and is never executed.
func (r *Row) Payload() string { return StripDocs(r.Content) }

// StripDocs removes documentation lines (first non-blank character '#') from a
// content value and trims what is left.
func StripDocs(content string) string {
	if !strings.Contains(content, "#") {
		return strings.TrimSpace(content)
	}
	var b strings.Builder
	for _, line := range strings.Split(content, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return strings.TrimSpace(b.String())
}

// DocLine returns the text after "# NAME:" in content (for example "WHAT"), or "".
func (r *Row) DocLine(name string) string {
	prefix := "# " + name + ":"
	for _, line := range strings.Split(r.Content, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line[len(prefix):])
		}
	}
	return ""
}

// Description is what the row says it does: the text of its "# WHAT:" line,
// or, without one, its first documentation line with the '#'s trimmed; ""
// when content has no documentation line.
func (r *Row) Description() string {
	if what := r.DocLine("WHAT"); what != "" {
		return what
	}
	for _, line := range strings.Split(r.Content, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "#") {
			return strings.TrimSpace(strings.TrimLeft(l, "#"))
		}
	}
	return ""
}

// Violation is a registry-hygiene problem with a row; "" means none.
type Violation string

// The hygiene gate's two violations.
const (
	MissingDescription    Violation = "missing_description"
	HighRiskMissingSchema Violation = "high_risk_missing_schema"
)

// Hygiene returns the row's hygiene violations, in a fixed order.
func (r *Row) Hygiene() []Violation {
	var v []Violation
	if strings.TrimSpace(r.Content) == "" {
		v = append(v, MissingDescription)
	}
	if r.Sensitive != 0 && strings.TrimSpace(r.InputSchema) == "" {
		v = append(v, HighRiskMissingSchema)
	}
	return v
}

// Message says what is wrong with a row that has the violation.
func (v Violation) Message() string {
	switch v {
	case MissingDescription:
		return "content is empty: a row must say what it does"
	case HighRiskMissingSchema:
		return "the row is sensitive but has no input_schema"
	}
	return ""
}

// HowToFix says how to repair a hygiene violation.
func (v Violation) HowToFix() string {
	switch v {
	case MissingDescription:
		return "content (the docstring: '# WHAT:', '# WHEN_TO_USE:', '# ARGS:', '# EX:' lines, then the payload) is required; write it and resend"
	case HighRiskMissingSchema:
		return "a sensitive row must carry input_schema (a JSON Schema object) so bad calls are stopped before they run; supply input_schema in the same call, or set sensitive to 0"
	}
	return ""
}
