package mcpimport

import (
	"encoding/json"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
)

// Change is what Sync found for one row, or one new tool.
type Change struct {
	Key   string `json:"key,omitempty"`
	Tool  string `json:"tool"`
	State string `json:"state"` // unchanged, drifted, accepted, rejected, removed, new
	Was   string `json:"was,omitempty"`
	Now   string `json:"now,omitempty"`
}

// Sync compares the rows that call server's tools (stored) with the tools
// the server lists now. A tool whose definition changed marks its row
// drifted (a DriftedLine in content: its contract changes, so calls through
// tokens pinned to it stop), unless accept names the row, which defines it
// again from the tool (input_schema, content, sensitive; never target, auth
// or type), or reject does, which disables it. A tool that is gone disables
// its row; a tool no row calls is reported new. writes are the rows to
// store (with the version they were read at).
func Sync(server string, stored []rowcall.Row, tools []*sdk.Tool, secrets []string, accept, reject func(key string) bool) (writes []rowcall.Row, changes []Change) {
	byName := map[string]*sdk.Tool{}
	for _, t := range tools {
		byName[t.Name] = t
	}
	called := map[string]bool{}
	for _, row := range stored {
		name := row.Target[strings.LastIndexByte(row.Target, '#')+1:]
		called[name] = true
		c := Change{Key: row.Key, Tool: name, Was: row.DocLine("UPSTREAM")}
		t := byName[name]
		switch {
		case t == nil:
			c.State = "removed"
			if row.Enabled != 0 {
				row.Enabled = 0
				writes = append(writes, row)
			}
		case Fingerprint(t) == c.Was:
			c.State = "unchanged"
		case accept(row.Key):
			c.State, c.Now = "accepted", Fingerprint(t)
			schema, _ := json.Marshal(t.InputSchema)
			define(&row, t, schema, secrets)
			writes = append(writes, row)
		case reject(row.Key):
			c.State, c.Now = "rejected", Fingerprint(t)
			if row.Enabled != 0 {
				row.Enabled = 0
				writes = append(writes, row)
			}
		default:
			c.State, c.Now = "drifted", Fingerprint(t)
			mark := DriftedLine + "the server's definition is now " + c.Now + "; accept or reject it (rowcall mcp sync --accept|--reject " + row.Key + ")"
			if !strings.Contains(row.Content, mark) {
				// The mark changes what the row says it does (its # WHAT:
				// line), which the contract covers.
				content := dropLines(row.Content, DriftedLine)
				if !strings.Contains(content, "# WHAT: "+driftedWhat) {
					content = strings.Replace(content, "# WHAT: ", "# WHAT: "+driftedWhat, 1)
				}
				row.Content = content + mark + "\n"
				writes = append(writes, row)
			}
		}
		changes = append(changes, c)
	}
	for _, t := range tools {
		if !called[t.Name] {
			changes = append(changes, Change{Tool: t.Name, State: "new", Now: Fingerprint(t)})
		}
	}
	return writes, changes
}

// driftedWhat starts a drifted row's # WHAT: line.
const driftedWhat = "(drifted: the MCP server changed this tool) "

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
