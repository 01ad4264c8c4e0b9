package test

import (
	"strings"
	"testing"

	"github.com/rowcall/rowcall/test/console"
)

// The console shows drift: an MCP server changes a tool and says so
// (list_changed); the directory marks the row drifted, the row's page shows
// the approved definition against the server's (description, input schema,
// annotations) and the tool the server now offers; Accept defines the row
// again from the tool, which clears the drift, and Import makes the offered
// tool's row.
//
//	go test ./test -run 'TestConsoleShowsMCPDrift' -v
func TestConsoleShowsMCPDrift(t *testing.T) {
	up := newChangingServer(t, false)
	h := startHost(t, allowLoopback)
	importChanging(t, h, up)
	up.set("Looks a word up and deletes it.", changedSchema)
	up.add("fresh")
	rowUntil(t, h, "UP_LOOKUP", "the host to mark UP_LOOKUP drifted", drifted)

	ctx := browser(t, console.Laptop)
	run(t, ctx, console.SignIn(h.URL, h.Key), console.Go("#/dir"))
	if got := js[string](t, ctx, `[...document.querySelectorAll('#rows tr')].filter(tr => tr.querySelector('.badge.drifted')).map(tr => tr.querySelector('td').innerText).join(',')`); got != "UP_LOOKUP" {
		t.Fatalf("rows with a drifted badge: %q, want UP_LOOKUP", got)
	}

	run(t, ctx, console.Go("#/row/UP_LOOKUP"), console.Wait(`!!document.getElementById('drift-diff')`))
	if got := textOf(t, ctx, `#mcp-last-sync`); !strings.HasPrefix(got, "Last synced ") {
		t.Fatalf("the last sync shows %q", got)
	}
	if got := textOf(t, ctx, `#drift-state`); !strings.Contains(got, "definition_changed") {
		t.Fatalf("the drift says %q", got)
	}
	if got := textOf(t, ctx, `#drift-diff [data-field=description]`); !strings.Contains(got, "+ Looks a word up and deletes it.") {
		t.Fatalf("the description's diff shows %q", got)
	}
	if got := textOf(t, ctx, `#drift-diff [data-field=input_schema]`); !strings.Contains(got, `+ `) || !strings.Contains(got, `"force"`) {
		t.Fatalf("the input schema's diff shows %q", got)
	}
	if got := textOf(t, ctx, `#offered [data-tool=fresh]`); !strings.Contains(got, "Import as UP_FRESH") {
		t.Fatalf("the offered tool shows %q", got)
	}
	history := len(h.do(t, req{Method: "GET", Path: "/api/directory/UP_LOOKUP/history"}).JSON["events"].([]any))

	run(t, ctx, console.Then(console.Click("#drift-accept")), console.Wait(`!!document.getElementById('drift-none')`))
	if got := textOf(t, ctx, "#capability"); strings.Contains(got, "drifted") {
		t.Fatalf("after Accept the row still says %q", got)
	}
	row := h.do(t, req{Method: "GET", Path: "/api/directory/UP_LOOKUP"}).JSON
	if drifted(row) || !strings.Contains(row["input_schema"].(string), "force") || !strings.Contains(row["content"].(string), "deletes it") {
		t.Fatalf("the accepted row: %v", row)
	}
	if n := len(h.do(t, req{Method: "GET", Path: "/api/directory/UP_LOOKUP/history"}).JSON["events"].([]any)); n != history+1 {
		t.Fatalf("history: %d events after Accept, want %d", n, history+1)
	}

	run(t, ctx, console.Click(`#offered [data-tool=fresh] button`), console.Wait(`!!document.querySelector('#offered [data-tool=fresh] a')`))
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/UP_FRESH"}), 200, map[string]any{"runner": "mcp", "target": "MCP " + up.URL + "#fresh"})
	run(t, ctx, console.Go("#/dir"))
	if n := js[int](t, ctx, `document.querySelectorAll('#rows .badge.drifted').length`); n != 0 {
		t.Fatalf("%d drifted badges after Accept", n)
	}
}
