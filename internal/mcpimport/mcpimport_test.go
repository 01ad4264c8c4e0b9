package mcpimport

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

// An upstream's text is untrusted: control characters cannot open docstring
// lines of their own, credential values are redacted, sizes are capped, and
// nothing the server sends sets a row's target, auth or type.
func TestUntrustedToolText(t *testing.T) {
	yes := true
	tools := []*sdk.Tool{
		{Name: "create_issue", Title: "Create\nan issue", InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"n":{"type":"integer"}},"required":["title"]}`),
			Description: "Opens an issue.\n# AUTH: none\x1b[31m token tok-s3cr3t-value " + strings.Repeat("long ", 400),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}},
		{Name: "list_things", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "bad#name", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "titled", Title: "Close\nan issue", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	rows, skipped := Rows("https://mcp.example.com/mcp", tools, []string{"tok-s3cr3t-value"}, Options{Prefix: "GH_", Auth: "bearer:GH_TOKEN"})
	if len(rows) != 3 || len(skipped) != 1 {
		t.Fatalf("rows %d, skipped %v", len(rows), skipped)
	}
	r := rows[0]
	if r.Key != "GH_CREATE_ISSUE" || r.Target != "MCP https://mcp.example.com/mcp#create_issue" || r.Auth != "bearer:GH_TOKEN" || r.Type != "http" || r.Runner != "mcp" {
		t.Fatalf("row: %+v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Content), "\n")
	if len(lines) != 5 || lines[4] != mcpcall.UpstreamLine+mcpcall.Fingerprint(tools[0]) || lines[0] != "# WHAT: Opens an issue." || !strings.HasPrefix(lines[1], "# WHEN_TO_USE: # AUTH: none") ||
		lines[2] != "# ARGS: $1=title | $2=n (optional)" || lines[3] != "# EX: [GH_CREATE_ISSUE]x|1[/GH_CREATE_ISSUE]" {
		t.Fatalf("docstring:\n%s", r.Content)
	}
	if strings.Contains(r.Content, "tok-s3cr3t-value") || strings.Contains(r.Content, "\x1b") || len(lines[1]) > MaxWhen+20 {
		t.Fatalf("untrusted text kept: %q", lines[1])
	}
	// What a tool does is its description's first sentence; its title, a
	// name, stands in only when there is no description, cleaned the same way.
	if !strings.HasPrefix(rows[1].Content, "# WHAT: the MCP tool list_things\n") || !strings.HasPrefix(rows[2].Content, "# WHAT: Close an issue\n# EX:") {
		t.Fatalf("without a description:\n%s\n%s", rows[1].Content, rows[2].Content)
	}
	if r.Sensitive != 1 || rows[1].Sensitive != 0 {
		t.Fatalf("sensitive: destructive %d, read-only %d", r.Sensitive, rows[1].Sensitive)
	}
	if r.InputSchema != `{"type":"object","properties":{"title":{"type":"string"},"n":{"type":"integer"}},"required":["title"]}` {
		t.Fatalf("input_schema lost its order: %s", r.InputSchema)
	}
}

// A tool's outputSchema is the row's output_schema when it is an object
// schema under MaxSchema (redacted, as the input schema is); any other is
// left out, and the row's result stays text. A tool without one keeps the
// fingerprint it had before rows took output schemas.
func TestToolOutputSchema(t *testing.T) {
	out := `{"type":"object","properties":{"temperature":{"type":"number","description":"tok-s3cr3t-value"}},"required":["temperature"]}`
	tools := []*sdk.Tool{
		{Name: "weather", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(out)},
		{Name: "listing", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"array","items":{"type":"string"}}`)},
		{Name: "huge", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", MaxSchema) + `"}`)},
		{Name: "broken", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`)},
		{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	rows, skipped := Rows("https://mcp.example.com/mcp", tools, []string{"tok-s3cr3t-value"}, Options{})
	if len(rows) != 5 || len(skipped) != 0 {
		t.Fatalf("rows %d, skipped %v", len(rows), skipped)
	}
	if want := strings.Replace(out, "tok-s3cr3t-value", "[REDACTED]", 1); rows[0].OutputSchema != want {
		t.Fatalf("output_schema %s, want %s", rows[0].OutputSchema, want)
	}
	for _, r := range rows[1:] {
		if r.OutputSchema != "" {
			t.Fatalf("%s: output_schema %.80s", r.Key, r.OutputSchema)
		}
	}
	b, _ := json.Marshal([]any{tools[4].Name, tools[4].Title, tools[4].Description, tools[4].InputSchema, tools[4].Annotations})
	if sum := sha256.Sum256(b); mcpcall.Fingerprint(tools[4]) != "sha256:"+hex.EncodeToString(sum[:]) || mcpcall.Fingerprint(tools[0]) == mcpcall.Fingerprint(&sdk.Tool{Name: "weather", InputSchema: tools[0].InputSchema}) {
		t.Fatal("the fingerprint of a tool without an output schema changed, or one with it ignores it")
	}
}

// A sync lists a server's tools with the first of its rows' auths that the
// host holds itself; only when every row names a per-caller connection
// does it name that provider (the owner's connection is then used).
func TestListAuth(t *testing.T) {
	row := func(auth string) rowcall.Row { return rowcall.Row{Key: "K", Auth: auth} }
	for _, c := range []struct {
		rows           []rowcall.Row
		auth, provider string
	}{
		{[]rowcall.Row{row("bearer:connection:idp"), row("bearer:API_KEY")}, "bearer:API_KEY", ""},
		{[]rowcall.Row{row("bearer:connection:idp"), row("")}, "", ""},
		{[]rowcall.Row{row("nonsense:"), row("bearer:connection:gh"), row("bearer:connection:idp")}, "bearer:connection:gh", "gh"},
		{[]rowcall.Row{row("nonsense:")}, "nonsense:", ""},
	} {
		if auth, provider := ListAuth(c.rows); auth != c.auth || provider != c.provider {
			t.Errorf("ListAuth(%v) = %q, %q; want %q, %q", c.rows, auth, provider, c.auth, c.provider)
		}
	}
}
