package test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/internal/rowgen"
)

// intentBudget is the bound on going from plain words to a receipted
// call: at most 3 requests and 3 KB of response bodies.
const (
	intentRequests = 3
	intentBytes    = 3 * 1024
)

// tally counts the requests a caller made and the bytes of their response
// bodies (headers not counted).
type tally struct {
	requests, bytes int
	each            []string
}

func (tl *tally) add(name string, r resp) resp {
	tl.requests++
	tl.bytes += len(r.Raw)
	tl.each = append(tl.each, name+" "+itoa(len(r.Raw)))
	return r
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// mcpData is the JSON-RPC message of an MCP answer, sent as JSON or as one
// server-sent event.
func mcpData(t *testing.T, r resp) map[string]any {
	t.Helper()
	raw := string(r.Raw)
	if i := strings.Index(raw, "data: "); i >= 0 {
		raw = raw[i+len("data: "):]
		raw = raw[:strings.IndexByte(raw+"\n", '\n')]
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("MCP answer %d %q: %v", r.Status, r.Raw, err)
	}
	return m
}

// From plain words to a receipted call at 10,000 rows, over REST and over
// MCP, within 3 requests and 3 KB of responses each (the counts go to
// docs/benchmarks.md, "Ask"). REST: ask, the brief
// contract, the call from the match's call field. MCP: initialize,
// search_capabilities, call_capability with the tool name and arguments the
// search answer gave (the initialized notification is sent too; it has no
// answer and is counted apart).
func TestIntentToReceiptBytes(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback, "ROWCALL_EMBED_PROVIDER=off")
	rows := rowgen.Noise(10_000, 7)
	importRows(t, h, rows)
	createRow(t, h, temperatureRow(up.URL))
	const intent = "current temperature at a coordinate"

	t.Run("rest", func(t *testing.T) {
		var tl tally
		got := tl.add("ask", h.do(t, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape(intent)}))
		expect(t, got, 200, nil)
		matches := got.JSON["matches"].([]any)
		first := matches[0].(map[string]any)
		if first["key"] != "ZZ_TEST_TEMPERATURE" {
			t.Fatalf("ask ranked %v first: %s", first["key"], got.Raw)
		}
		doc := tl.add("contract", h.do(t, req{Method: "GET", Path: strings.TrimPrefix(first["contract"].(string), h.URL)}))
		expect(t, doc, 200, nil)
		for _, block := range []string{"**Capability:**", "**When to use:**", "**RUN NOW:** http", "**Example call:** `[ZZ_TEST_TEMPERATURE]",
			"type · runner · auth · risk:", "**Inputs:**", "**Outputs:**", "**Your credential can:**", "Do not infer the row shape from memory", "contract_sha256:", "receipt:"} {
			if !strings.Contains(string(doc.Raw), block) {
				t.Errorf("the brief contract lacks %q:\n%s", block, doc.Raw)
			}
		}
		if len(doc.Raw) > 1100 {
			t.Errorf("the brief contract is %d bytes, over ~1 KB:\n%s", len(doc.Raw), doc.Raw)
		}
		res := tl.add("dispatch", h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: first["call"]}))
		expect(t, res, 200, map[string]any{"ok": true, "ran": true})
		proof, _ := res.JSON["proof"].(map[string]any)
		if id, _ := proof["invocation_id"].(string); !strings.HasPrefix(id, "inv_") {
			t.Fatalf("no receipt in %s", res.Raw)
		}
		t.Logf("REST at %d rows: %d requests, %d bytes (%s); %d matches", len(rows)+1, tl.requests, tl.bytes, strings.Join(tl.each, ", "), len(matches))
		if tl.requests > intentRequests || tl.bytes > intentBytes {
			t.Errorf("REST intent → receipt took %d requests and %d bytes; the bound is %d and %d", tl.requests, tl.bytes, intentRequests, intentBytes)
		}
	})

	t.Run("mcp", func(t *testing.T) {
		var tl tally
		accept := map[string]string{"Accept": "application/json, text/event-stream"}
		init := tl.add("initialize", h.do(t, req{Method: "POST", Path: "/mcp", Header: accept, Body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
			"params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bytes", "version": "1"}}}}))
		if init.Status != 200 || mcpData(t, init)["result"] == nil {
			t.Fatalf("initialize: %d %s", init.Status, init.Raw)
		}
		session := map[string]string{"Accept": accept["Accept"], "Mcp-Session-Id": init.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
		note := h.do(t, req{Method: "POST", Path: "/mcp", Header: session, Body: map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}})
		if note.Status != 202 {
			t.Fatalf("notifications/initialized: %d %s", note.Status, note.Raw)
		}
		call := func(id int, name string, args any) (resp, map[string]any) {
			r := h.do(t, req{Method: "POST", Path: "/mcp", Header: session, Body: map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
				"params": map[string]any{"name": name, "arguments": args}}})
			m, _ := mcpData(t, r)["result"].(map[string]any)
			if r.Status != 200 || m == nil || m["isError"] == true {
				t.Fatalf("tools/call %s: %d %s", name, r.Status, r.Raw)
			}
			return r, m
		}
		r, found := call(2, "search_capabilities", map[string]any{"query": intent})
		tl.add("search", r)
		sc := found["structuredContent"].(map[string]any)
		first := sc["matches"].([]any)[0].(map[string]any)
		if first["key"] != "ZZ_TEST_TEMPERATURE" || !strings.HasPrefix(first["call"].(string), "call_capability ") {
			t.Fatalf("search_capabilities: %s", r.Raw)
		}
		// The match's call line is the tool and its arguments as JSON.
		var args map[string]any
		line := strings.TrimPrefix(first["call"].(string), "call_capability ")
		if err := json.NewDecoder(strings.NewReader(line)).Decode(&args); err != nil {
			t.Fatalf("the call line %q is not a tool name and JSON arguments: %v", line, err)
		}
		r, res := call(3, "call_capability", args)
		tl.add("call", r)
		rc, _ := res["_meta"].(map[string]any)
		if rc == nil || !strings.Contains(string(r.Raw), "inv_") {
			t.Fatalf("call_capability gave no receipt: %s", r.Raw)
		}
		t.Logf("MCP at %d rows: %d requests, %d bytes (%s), and the initialized notification (%d bytes)", len(rows)+1, tl.requests, tl.bytes, strings.Join(tl.each, ", "), len(note.Raw))
		if tl.requests > intentRequests || tl.bytes > intentBytes {
			t.Errorf("MCP intent → receipt took %d requests and %d bytes; the bound is %d and %d", tl.requests, tl.bytes, intentRequests, intentBytes)
		}
	})
}
