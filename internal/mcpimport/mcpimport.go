// Package mcpimport turns an MCP server's tools into rows: one http row per
// tool, runner "mcp", for `rowcall import mcp` and POST /api/import/mcp.
// List lists the tools for an import, signing the host in to a server that
// needs a person's sign-in (a provider it registers, connected to once).
//
//	tools, secrets, err := runner.ListTools(ctx, server, auth, env)   // runners/mcpcall
//	rows := mcpimport.Rows(server, tools, secrets, mcpimport.Options{Prefix: "GH_", Auth: auth})
//
// Each row: key from the tool's name in the key convention (importdoc.Key:
// create_issue is CREATE_ISSUE), target "MCP <server>#<tool>", input_schema
// the tool's inputSchema (its property order is the pipe arguments' order),
// output_schema its outputSchema when that is an object schema (outputSchema),
// content a docstring made from its description (# WHAT its first sentence,
// # WHEN_TO_USE the rest; the title when there is no description), # ARGS,
// and an # EX from the schema (importdoc.Sample), and
// sensitive unless the server says the tool only reads (readOnlyHint, and no
// destructiveHint). The server's text is untrusted: control characters are
// stripped, every credential value used to list the tools is redacted, and
// each field is capped. The server never sets a row's target, auth or type:
// those come from the import's own arguments.
//
// Drift: the content ends with "# UPSTREAM: sha256:<hex>", mcpcall.Fingerprint
// of the tool's definition (name, title, description, input schema,
// annotations) as the server listed it. Sync compares it with the server's
// current definition; a change marks the row: its # WHAT: line starts
// "(drifted: …)" and a "# DRIFTED: …" line says what to do (what a row says
// it does is in its contract, so tokens pinned to it stop with
// contract_changed) until the owner accepts (the row is imported again) or
// rejects (the row keeps the approved definition and records the rejected
// one in a "# REJECTED: …" line; mcpcall then refuses its calls while the
// server lists anything else). A Watcher runs Sync in the background (on
// tools/list_changed and periodically).
package mcpimport

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/importdoc"
	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/internal/typed"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

// Options are what an import takes besides the server.
type Options struct {
	Prefix   string // put before every key, e.g. GH_
	Category string // every row's category
	Auth     string // every row's auth column, e.g. bearer:GITHUB_TOKEN
}

// Caps on the server's text, in bytes.
const (
	MaxWhat   = 200
	MaxWhen   = 600
	MaxSchema = 16 << 10
)

// Rows makes one row per tool; a tool whose name or schema cannot be a row is
// listed in skipped with why.
func Rows(server string, tools []*sdk.Tool, secrets []string, o Options) (rows []rowcall.Row, skipped []string) {
	taken := map[string]bool{}
	for _, t := range tools {
		name := clean(t.Name, 128, secrets)
		key := o.Prefix + importdoc.Key(name)
		schema, err := json.Marshal(t.InputSchema)
		switch {
		case name == "" || name != t.Name || strings.ContainsAny(name, "# \t"):
			skipped = append(skipped, fmt.Sprintf("%q: a tool name a target cannot carry", name))
			continue
		case !rowcall.ValidKey(key):
			skipped = append(skipped, name+": its key "+key+" breaks the key rule ("+rowcall.KeyRule+")")
			continue
		case taken[key]:
			skipped = append(skipped, name+": its key "+key+" is another tool's")
			continue
		case err != nil || len(schema) > MaxSchema:
			skipped = append(skipped, name+": its inputSchema is not JSON under 16 KiB")
			continue
		}
		taken[key] = true
		row := rowcall.NewRow(key, rowcall.TypeHTTP)
		row.Runner, row.Target, row.Auth, row.Category = "mcp", "MCP "+server+"#"+t.Name, o.Auth, o.Category
		define(&row, t, schema, secrets)
		rows = append(rows, row)
	}
	return rows, skipped
}

// define sets what the tool's definition decides: input_schema,
// output_schema, content and sensitive.
func define(row *rowcall.Row, t *sdk.Tool, schema []byte, secrets []string) {
	row.InputSchema = redact.String(string(schema), secrets)
	row.OutputSchema = outputSchema(t, secrets)
	row.Content = docstring(row.Key, t, row.InputSchema, secrets)
	row.Sensitive = 1
	if a := t.Annotations; a != nil && a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint) {
		row.Sensitive = 0
	}
}

// outputSchema is the tool's outputSchema as the row's output_schema: kept
// when it is a JSON Schema object of type "object" (what every protocol
// version carries) under MaxSchema that compiles once redacted; otherwise
// the row declares no output and its result is text.
func outputSchema(t *sdk.Tool, secrets []string) string {
	if t.OutputSchema == nil {
		return ""
	}
	b, err := json.Marshal(t.OutputSchema)
	var top struct {
		Type any `json:"type"`
	}
	if err != nil || len(b) > MaxSchema || json.Unmarshal(b, &top) != nil || top.Type != "object" {
		return ""
	}
	s := redact.String(string(b), secrets)
	if _, err := typed.CompileOutput(s); err != nil {
		return ""
	}
	return s
}

// docstring is the row's content: the tool's own words, cleaned. What it
// does is its description's first sentence, and the rest of the description
// is when to use it; the title, a name for people ("Create Entities") much
// like the key, stands in only for a missing description (docs/RATIONALE.md,
// "Why is an imported MCP tool's # WHAT its description's first sentence?").
func docstring(key string, t *sdk.Tool, schema string, secrets []string) string {
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	desc := clean(t.Description, MaxWhen, secrets)
	what := clean(importdoc.FirstSentence(desc), MaxWhat, secrets)
	when := strings.TrimSpace(strings.TrimPrefix(desc, what)) // all of it again if what was clipped
	if what == "" {
		what = clean(title, MaxWhat, secrets)
	}
	if what == "" {
		what = "the MCP tool " + clean(t.Name, 128, nil)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# WHAT: %s\n", what)
	if when != "" {
		fmt.Fprintf(&b, "# WHEN_TO_USE: %s\n", when)
	}
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	json.Unmarshal([]byte(schema), &s)
	names := propertyOrder(schema)
	if len(names) > 0 {
		args, ex := make([]string, len(names)), make([]string, len(names))
		for i, n := range names {
			args[i] = fmt.Sprintf("$%d=%s", i+1, clean(n, 64, secrets))
			if !contains(s.Required, n) {
				args[i] += " (optional)"
			}
			ex[i] = clean(importdoc.Sample(s.Properties[n]), 64, secrets)
		}
		fmt.Fprintf(&b, "# ARGS: %s\n", strings.Join(args, " | "))
		fmt.Fprintf(&b, "# EX: [%s]%s[/%s]\n", key, strings.Join(ex, "|"), key)
	} else {
		fmt.Fprintf(&b, "# EX: [%s][/%s]\n", key, key)
	}
	fmt.Fprintf(&b, "%s%s\n", mcpcall.UpstreamLine, mcpcall.Fingerprint(t))
	return b.String()
}

// DriftedLine starts the line Sync adds when the server's definition changed.
const DriftedLine = "# DRIFTED: "

// propertyOrder is the schema's top-level property names in declared order.
func propertyOrder(schema string) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(schema), &top) != nil {
		return nil
	}
	d := json.NewDecoder(strings.NewReader(string(top["properties"])))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var names []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return names
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return names
		}
		names = append(names, t.(string))
	}
	return names
}

// clean is untrusted text made safe to keep: control characters (newlines
// included, so no text can open a docstring line of its own) become spaces,
// runs of blanks one, secrets are redacted, and the result is capped at n bytes.
func clean(s string, n int, secrets []string) string {
	return redact.Clip(redact.Line(s), n, secrets)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
