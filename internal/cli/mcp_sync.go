package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strings"
)

// MCPSyncCommand is `rowcall mcp sync [SERVER]`: compare every MCP server's
// tools (or SERVER's: a URL, stdio:NAME or NAME) with the rows that call
// them, through POST /api/mcp/sync (the host runs the same sync by itself on
// tools/list_changed and every --mcp-sync-every). A changed tool marks its
// row drifted (tokens pinned to the row stop with contract_changed) until
// --accept (the row is defined again from the tool) or --reject (the row
// keeps the approved definition; its calls are refused with
// definition_rejected while the server lists the changed one); a removed
// tool disables its row; new tools are listed.
type MCPSyncCommand struct {
	client
	accept, reject string
	dry            bool
}

func (c *MCPSyncCommand) Usage() (string, string) {
	return "[SERVER]", "compare MCP servers' tools with their rows: drifted, removed, new; accept or reject a change"
}

func (c *MCPSyncCommand) Flags(fs *flag.FlagSet) {
	c.client.flags(fs)
	fs.StringVar(&c.accept, "accept", "", "rows whose changed tool to take (KEY,KEY or * for all): defined again from the tool")
	fs.StringVar(&c.reject, "reject", "", "rows whose changed tool to refuse (KEY,KEY): the approved definition stays, calls are refused while the server lists the changed one")
	fs.BoolVar(&c.dry, "dry-run", false, "report; change nothing")
}

func (c *MCPSyncCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("usage: rowcall mcp sync [SERVER] [--accept KEY,…|*] [--reject KEY,…] [--dry-run] [--url URL]")
	}
	q := url.Values{"accept": {c.accept}, "reject": {c.reject}}
	if len(args) == 1 {
		q.Set("server", args[0])
	}
	if c.dry {
		q.Set("dry_run", "1")
	}
	c.connect(ctx, env)
	status, out, err := c.do("POST", "/api/mcp/sync?"+q.Encode(), map[string]any{})
	if err != nil {
		return err
	}
	b, _ := json.Marshal(out)
	if status != 200 {
		return fmt.Errorf("HTTP %d: %s", status, b)
	}
	var res struct {
		Servers []struct {
			Server  string   `json:"server"`
			Error   string   `json:"error"`
			Changes []change `json:"changes"`
		} `json:"servers"`
	}
	json.Unmarshal(b, &res)
	failed := 0
	for _, s := range res.Servers {
		if s.Error != "" {
			fmt.Fprintf(env.Stdout, "%s: %s\n", s.Server, s.Error)
			failed++
			continue
		}
		fmt.Fprintf(env.Stdout, "%s: %s\n", s.Server, tally(s.Changes))
		for _, ch := range s.Changes {
			if ch.State == "unchanged" {
				continue
			}
			key := ch.Key
			if ch.State == "new" && key != "" {
				key = "(its row would be " + key + ")"
			}
			fmt.Fprintf(env.Stdout, "  %-9s %s %s\n", ch.State, ch.Tool, key)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d servers could not be listed", failed)
	}
	return nil
}

// change is one tool's line of a sync's answer.
type change struct {
	Key, Tool, State, Was, Now string
}

// tally counts a server's tools by state, in the order each state first
// came: "12 unchanged, 1 drifted" ("no tools" for none).
func tally(changes []change) string {
	var order []string
	n := map[string]int{}
	for _, ch := range changes {
		if n[ch.State] == 0 {
			order = append(order, ch.State)
		}
		n[ch.State]++
	}
	if len(order) == 0 {
		return "no tools"
	}
	parts := make([]string, len(order))
	for i, state := range order {
		parts[i] = fmt.Sprintf("%d %s", n[state], state)
	}
	return strings.Join(parts, ", ")
}
