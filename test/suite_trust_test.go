package test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
)

// suiteTrust: the statements behind tokens, the receipt chain, import and
// search run on every database: a scoped token invokes its row and nothing
// else until revoked, the signed chain exports, import upserts, ask finds.
func suiteTrust(t *testing.T, tg *target, up *upstream) {
	h := tg.host
	createRow(t, h, map[string]any{"key": "S_TOK", "type": "http", "target": "GET " + up.URL + "/tok?q=$1",
		"content": "# WHAT: Look up the suite's zebra inventory by warehouse.\n# ARGS: $1=warehouse"})
	secret, id, _ := mint(t, h, map[string]any{"name": "suite", "keys": []string{"S_TOK"}, "expires_in": 3600})
	expect(t, tokenCall(t, h, secret, "S_TOK", "w1"), 200, map[string]any{"ok": true, "ran": true})
	expect(t, tokenCall(t, h, secret, "S_REG2", ""), 404, map[string]any{"error": "unknown_key", "ran": false})
	expect(t, asToken(t, h, secret, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "S_NOPE", "type": "http", "content": "# WHAT: x"}}), 403, nil)
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/tokens/" + id}), 200, map[string]any{"ok": true, "id": id})
	if got := tokenCall(t, h, secret, "S_TOK", "w1"); got.Status == 200 {
		t.Fatalf("a revoked token still invokes: %s", got.Raw)
	}

	got := h.do(t, req{Method: "GET", Path: "/api/receipts"})
	expect(t, got, 200, nil)
	if !strings.Contains(string(got.Raw), `"sig"`) || !strings.Contains(string(got.Raw), "S_TOK") {
		t.Fatalf("receipt export %.300s", got.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/.well-known/rowcall-receipt-keys", NoAuth: true}), 200, nil)

	expect(t, h.do(t, req{Method: "POST", Path: "/api/import", Body: map[string]any{"rows": []map[string]any{
		{"key": "S_IMPORTED", "type": "flow", "content": "# WHAT: Imported through the suite's import call.\nS_TOK: $1"}}}}), 200, map[string]any{"ok": true})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_IMPORTED"}), 200, map[string]any{"type": "flow"})
	got = h.do(t, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape("zebra inventory in a warehouse") + "&limit=5"})
	expect(t, got, 200, nil)
	matches, _ := got.JSON["matches"].([]any)
	if len(matches) == 0 || matches[0].(map[string]any)["key"] != "S_TOK" {
		t.Fatalf("ask: %s", got.Raw)
	}
	suiteCheckpoint(t, tg)
	suiteAlteredReceipt(t, tg)
}

// suiteCheckpoint: the signed chain head at /.well-known/rowcall-checkpoint is
// public, verifies with the published key, names the newest receipt, and a
// chain cut short of it (the newest receipts deleted) no longer agrees.
func suiteCheckpoint(t *testing.T, tg *target) {
	h := tg.host
	got := h.do(t, req{Method: "GET", Path: "/.well-known/rowcall-checkpoint", NoAuth: true})
	expect(t, got, 200, nil)
	if ct := got.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("checkpoint Content-Type %q", ct)
	}
	cp, err := receiptKeys(t, h).OpenCheckpoint(got.Raw)
	if err != nil {
		t.Fatalf("checkpoint %q: %v", got.Raw, err)
	}
	chain := receiptChain(t, h)
	newest := chain[len(chain)-1]
	if cp.Origin != "rowcall/receipts" || cp.Size != newest.Seq || cp.Head != newest.SHA256 {
		t.Fatalf("checkpoint %+v, newest receipt seq %d", cp, newest.Seq)
	}
	if err := cp.Match(chain); err != nil {
		t.Fatalf("the chain does not agree with its own checkpoint: %v", err)
	}
	if err := cp.Match(chain[:len(chain)-2]); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("a chain without its newest two receipts: %v", err)
	}
}

// suiteAlteredReceipt: a receipt edited in the database is no longer
// confirmed by the public confirm or the receipt page, which say why; one
// re-hashed after the edit still fails, on its signature. An untouched one
// stays PROVEN.
func suiteAlteredReceipt(t *testing.T, tg *target) {
	h := tg.host
	confirm := func(id string) resp {
		return h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id, NoAuth: true})
	}
	var ids []string
	for range 3 {
		ids = append(ids, proof(t, dispatchCall(t, h, "S_TOK", "w1"))["invocation_id"].(string))
	}
	expect(t, confirm(ids[0]), 200, map[string]any{"confirmed": true, "status": "PROVEN_MATERIAL_RESULT", "verified": true})

	db := tg.DB(t)
	if _, err := db.Exec(`UPDATE receipts SET outcome = 'ERR:forged' WHERE id = ?`, ids[1]); err != nil {
		t.Fatal(err)
	}
	got := confirm(ids[1])
	expect(t, got, 200, map[string]any{"confirmed": false, "status": "RECEIPT_ALTERED", "verified": false})
	if reason, _ := got.JSON["reason"].(string); !strings.Contains(reason, "does not match its sha256") || !strings.Contains(reason, "altered") {
		t.Fatalf("altered receipt's reason: %s", got.Raw)
	}
	if strings.Contains(string(got.Raw), "PROVEN") {
		t.Fatalf("an altered receipt is answered PROVEN: %s", got.Raw)
	}
	page := h.do(t, req{Method: "GET", Path: "/receipt/" + ids[1], NoAuth: true, Header: map[string]string{"Accept": "application/json"}})
	expect(t, page, 200, map[string]any{"confirmed": false, "status": "RECEIPT_ALTERED"})
	html := h.do(t, req{Method: "GET", Path: "/receipt/" + ids[1], NoAuth: true})
	if !strings.Contains(string(html.Raw), "NOT CONFIRMED") || strings.Contains(string(html.Raw), "PROVEN") {
		t.Fatalf("altered receipt's page: %s", html.Raw)
	}

	// Edited and re-hashed, as someone without the signing key would: the
	// hash holds, the batch path to the signed root does not.
	var rc rowcall.Receipt
	b, _ := json.Marshal(confirm(ids[2]).JSON["receipt"])
	if err := json.Unmarshal(b, &rc); err != nil || rc.ID != ids[2] {
		t.Fatalf("receipt %s: %v %s", ids[2], err, b)
	}
	rc.OK, rc.Outcome = false, "ERR:forged"
	if _, err := db.Exec(`UPDATE receipts SET ok = 0, outcome = ?, sha256 = ? WHERE id = ?`, rc.Outcome, rowcall.Fingerprint(rc.Canonical()), rc.ID); err != nil {
		t.Fatal(err)
	}
	got = confirm(ids[2])
	expect(t, got, 200, map[string]any{"confirmed": false, "status": "RECEIPT_ALTERED", "verified": false})
	if reason, _ := got.JSON["reason"].(string); !strings.Contains(reason, "signature does not verify") {
		t.Fatalf("re-hashed receipt's reason: %s", got.Raw)
	}
	expect(t, confirm(ids[0]), 200, map[string]any{"confirmed": true, "status": "PROVEN_MATERIAL_RESULT"})
}

// receiptKeys reads the host's published receipt keys.
func receiptKeys(t *testing.T, h *host) ledger.Keys {
	t.Helper()
	var keys struct{ Keys []ledger.PublicKey }
	json.Unmarshal(h.do(t, req{Method: "GET", Path: "/.well-known/rowcall-receipt-keys", NoAuth: true}).Raw, &keys)
	k, err := ledger.ParseKeys(keys.Keys)
	if err != nil || len(k) == 0 {
		t.Fatalf("receipt keys: %v", err)
	}
	return k
}

// receiptChain exports the host's whole receipt chain (up to 10,000).
func receiptChain(t *testing.T, h *host) []rowcall.Receipt {
	t.Helper()
	var chain struct{ Receipts []rowcall.Receipt }
	json.Unmarshal(h.do(t, req{Method: "GET", Path: "/api/receipts?limit=10000"}).Raw, &chain)
	return chain.Receipts
}
