package mcpimport

import (
	"encoding/json"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/importdoc"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

// Change is what Sync found for one row, or one new tool.
type Change struct {
	Key   string `json:"key,omitempty"`
	Tool  string `json:"tool"`
	State string `json:"state"` // unchanged, drifted, accepted, rejected, removed, new
	Was   string `json:"was,omitempty"`
	Now   string `json:"now,omitempty"`
	// Approved and Current are, for a drifted or rejected row, the
	// definition the row holds and the server's current one, cleaned as an
	// import cleans it: what the console shows as the diff. A new tool has
	// Current only.
	Approved *Definition `json:"approved,omitempty"`
	Current  *Definition `json:"current,omitempty"`
	// Import is, for a new tool, POST /api/import/mcp's query that makes its
	// row as the server's other rows were made (their prefix, category and
	// auth); Key is then the key it would get.
	Import string `json:"import,omitempty"`
}

// Definition is a tool's definition as a row holds it: its description (the
// # WHAT: line, made from the tool's title or first sentence, and the
// # WHEN_TO_USE: line, its description, one a line), input_schema, and
// sensitive, which the annotations decide. Annotations are the server's
// (cleaned), on the current side only: a row keeps what they decided.
type Definition struct {
	Description string               `json:"description"`
	InputSchema json.RawMessage      `json:"input_schema,omitempty"`
	Annotations *sdk.ToolAnnotations `json:"annotations,omitempty"`
	Sensitive   int64                `json:"sensitive"`
}

// Sync compares the rows that call server's tools (stored) with the tools
// the server lists now. A tool whose definition changed marks its row
// drifted (a DriftedLine in content: its contract changes, so calls through
// tokens pinned to it stop), unless accept names the row, which defines it
// again from the tool (input_schema, content, sensitive; never target, auth
// or type), or reject does: the row keeps its approved definition, unmarked,
// and records the rejected one (mcpcall.RejectedLine), so the runner refuses
// its calls while the server lists anything but the approved definition. A
// server that lists the approved definition again clears both marks. A tool
// that is gone disables its row; a tool no row calls is reported new. writes
// are the rows to store (with the version they were read at). Background
// checks and `rowcall mcp sync` both run it: nothing is accepted unless
// accept says so.
func Sync(server string, stored []rowcall.Row, tools []*sdk.Tool, secrets []string, accept, reject func(key string) bool) (writes []rowcall.Row, changes []Change) {
	byName := map[string]*sdk.Tool{}
	for _, t := range tools {
		byName[t.Name] = t
	}
	called := map[string]bool{}
	for _, row := range stored {
		name := toolOf(row)
		called[name] = true
		c := Change{Key: row.Key, Tool: name, Was: row.DocLine("UPSTREAM")}
		t := byName[name]
		if t != nil {
			c.Now = mcpcall.Fingerprint(t)
		}
		before := row.Content
		switch {
		case t == nil:
			c.State = "removed"
			if row.Enabled != 0 {
				row.Enabled = 0
				writes = append(writes, row)
			}
		case c.Now == c.Was:
			c.State, c.Now = "unchanged", ""
			if row.DocLine("REJECTED") != "" || strings.Contains(row.Content, DriftedLine) { // the server came back
				row.Content = dropLines(unmark(row.Content), mcpcall.RejectedLine)
			}
		case accept(row.Key):
			c.State = "accepted"
			schema, _ := json.Marshal(t.InputSchema)
			define(&row, t, schema, secrets)
			writes = append(writes, row)
		case reject(row.Key) || row.DocLine("REJECTED") == c.Now:
			c.State, c.Approved, c.Current = "rejected", approved(row), current(t, secrets)
			row.Content = dropLines(unmark(row.Content), mcpcall.RejectedLine) + mcpcall.RejectedLine + c.Now + "\n"
		default:
			c.State, c.Approved, c.Current = "drifted", approved(row), current(t, secrets)
			mark := DriftedLine + "the server's definition is now " + c.Now + "; accept or reject it (rowcall mcp sync --accept|--reject " + row.Key + ")"
			if !strings.Contains(row.Content, mark) {
				// The mark changes what the row says it does (its # WHAT:
				// line), which the contract covers.
				content := dropLines(row.Content, DriftedLine)
				if !strings.Contains(content, "# WHAT: "+driftedWhat) {
					content = strings.Replace(content, "# WHAT: ", "# WHAT: "+driftedWhat, 1)
				}
				row.Content = content + mark + "\n"
			}
		}
		if row.Content != before && c.State != "accepted" {
			writes = append(writes, row)
		}
		changes = append(changes, c)
	}
	for _, t := range tools {
		if !called[t.Name] {
			c := Change{Tool: t.Name, State: "new", Now: mcpcall.Fingerprint(t), Current: current(t, secrets)}
			if len(stored) > 0 {
				c.Key, c.Import = offer(server, stored, t.Name)
			}
			changes = append(changes, c)
		}
	}
	return writes, changes
}

// ListAuth is the auth a sync lists server's tools with, from the rows that
// call it (stored): the first whose auth the host holds itself (not a
// per-caller connection), since a sync runs for no caller. When every row
// names a per-caller connection (bearer:connection:NAME), auth is the first
// row's and provider its NAME: the tools can be listed only with a
// connection of the host's own (the owner's), never a caller's.
func ListAuth(stored []rowcall.Row) (auth, provider string) {
	for _, row := range stored {
		if a, err := rowcall.ParseAuth(row.Auth); err == nil && a.Connection == "" {
			return row.Auth, ""
		}
	}
	for _, row := range stored {
		if a, err := rowcall.ParseAuth(row.Auth); err == nil {
			return row.Auth, a.Connection
		}
	}
	return stored[0].Auth, "" // no auth that parses: the listing says why
}

// toolOf is the tool an MCP row's target names.
func toolOf(row rowcall.Row) string { return row.Target[strings.LastIndexByte(row.Target, '#')+1:] }

// offer is the key a new tool's row would get and the import query that
// makes it with the server's rows' prefix, category and auth.
func offer(server string, stored []rowcall.Row, tool string) (key, query string) {
	first := stored[0]
	prefix := strings.TrimSuffix(first.Key, importdoc.Key(toolOf(first)))
	if prefix == first.Key {
		prefix = ""
	}
	q := url.Values{"server": {server}, "tool": {tool}}
	for k, v := range map[string]string{"prefix": prefix, "category": first.Category, "auth": first.Auth} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return prefix + importdoc.Key(tool), q.Encode()
}

// approved is the definition the row holds.
func approved(row rowcall.Row) *Definition {
	d := &Definition{Description: strings.TrimPrefix(row.DocLine("WHAT"), driftedWhat), Sensitive: row.Sensitive}
	if when := row.DocLine("WHEN_TO_USE"); when != "" {
		d.Description += "\n" + when
	}
	if json.Valid([]byte(row.InputSchema)) {
		d.InputSchema = json.RawMessage(row.InputSchema)
	}
	return d
}

// current is the server's definition of t as an import would keep it.
func current(t *sdk.Tool, secrets []string) *Definition {
	row := rowcall.Row{Key: "TOOL"}
	schema, _ := json.Marshal(t.InputSchema)
	define(&row, t, schema, secrets)
	d := approved(row)
	if a := t.Annotations; a != nil {
		kept := *a
		kept.Title = clean(a.Title, MaxWhat, secrets)
		d.Annotations = &kept
	}
	return d
}

// driftedWhat starts a drifted row's # WHAT: line.
const driftedWhat = "(drifted: the MCP server changed this tool) "

// unmark is content without the drift mark: its # WHAT: line as approved,
// no DriftedLine.
func unmark(content string) string {
	return strings.Replace(dropLines(content, DriftedLine), "# WHAT: "+driftedWhat, "# WHAT: ", 1)
}

// dropLines removes the lines that start with prefix.
func dropLines(content, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(content, "\n") {
		if l != "" && !strings.HasPrefix(strings.TrimSpace(l), strings.TrimSpace(prefix)) {
			b.WriteString(l)
		}
	}
	s := b.String()
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}
