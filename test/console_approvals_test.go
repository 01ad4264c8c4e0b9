package test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/test/console"
)

// TestConsoleApprovals: in a real headless Chromium, a person holding a token
// with the approve right sees the waiting call with its caller and the shape
// of what would be sent, and approves it with a reason; the call then runs
// once, and its receipt page names the approval and the approver. The owner
// denies another from the approval's own page (the link a 202 gives).
//
//	go test ./test -run TestConsoleApprovals -v
func TestConsoleApprovals(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"paid":true}`)) })
	h := startHost(t, allowLoopback)
	createRow(t, h, map[string]any{"key": "PAY", "type": "http", "target": "POST " + up.URL + "/pay?to=$1", "approval": 1,
		"content": "# WHAT: Pay a supplier.\n# ARGS: $1=supplier"})
	caller, callerID, _ := mint(t, h, map[string]any{"name": "agent", "keys": []string{"PAY"}})
	approver, approverID, _ := mint(t, h, map[string]any{"name": "treasurer", "keys": []string{"PAY"}, "approve": true})
	id := pendingID(t, tokenCall(t, h, caller, "PAY", "acme"))

	ctx := browser(t, console.Laptop)
	run(t, ctx, console.SignIn(h.URL, approver), console.Go("#/approvals"))
	card := `article[data-approval="` + id + `"]`
	if got := textOf(t, ctx, card+" .caller"); got != "token:"+callerID {
		t.Fatalf("the caller shows as %q", got)
	}
	if got := textOf(t, ctx, card+" pre.shape"); !strings.Contains(got, up.URL+"/pay?to=acme") || !strings.Contains(got, `"method": "POST"`) {
		t.Fatalf("the shape shows %q", got)
	}
	run(t, ctx, console.Fill(card+" input", "acme is on the supplier list"), console.Click(card+" button.approve"),
		console.Wait(`!!document.querySelector('`+card+` [data-decided]')`))
	if got := textOf(t, ctx, card+" [data-decided]"); !strings.HasPrefix(got, "Approved") {
		t.Fatalf("after approving the page says %q", got)
	}
	a := h.do(t, req{Method: "GET", Path: "/api/approvals/" + id})
	expect(t, a, 200, map[string]any{"status": "approved", "decided_by": "token:" + approverID, "reason": "acme is on the supplier list"})

	ran := approvedCall2(t, h, caller, "PAY", "acme", id)
	expect(t, ran, 200, map[string]any{"ok": true, "ran": true})
	expect(t, approvedCall2(t, h, caller, "PAY", "acme", id), 409, map[string]any{"error": "approval_used:" + id})
	if n := len(up.requests()); n != 1 {
		t.Fatalf("the upstream got %d requests, want 1", n)
	}
	inv := ran.JSON["proof"].(map[string]any)["invocation_id"].(string)
	run(t, ctx, console.Go("#/receipt/"+inv), console.Wait(`document.getElementById('browser-verdict').dataset.verified === 'true'`))
	if got := textOf(t, ctx, "#receipt-fields"); !strings.Contains(got, id) || !strings.Contains(got, "token:"+approverID) {
		t.Fatalf("the receipt shows %q", got)
	}

	// The owner denies another call on the page its 202 links to.
	got := tokenCall(t, h, caller, "PAY", "mallory")
	id2 := pendingID(t, got)
	approveURL := got.JSON["approve_url"].(string)
	run(t, ctx, console.Click("#who button"), console.SignInHere(h.Key), console.Go(strings.TrimPrefix(approveURL, h.URL+"/")))
	card = `article[data-approval="` + id2 + `"]`
	run(t, ctx, console.Fill(card+" input", "unknown supplier"), console.Click(card+" button.deny"),
		console.Wait(`!!document.querySelector('`+card+` [data-decided]')`))
	expect(t, approvedCall2(t, h, caller, "PAY", "mallory", id2), 403, map[string]any{"error": "approval_denied:" + id2, "reason": "unknown supplier"})
	if n := len(up.requests()); n != 1 {
		t.Fatalf("the upstream got %d requests, want 1", n)
	}
}

// approvedCall2 calls key with body as the token, naming approval id.
func approvedCall2(t *testing.T, h *host, token, key, body, id string) resp {
	t.Helper()
	return asToken(t, h, token, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": key, "body": body, "approval": id}})
}
