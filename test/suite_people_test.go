package test

import (
	"strings"
	"testing"
)

// suitePeople: people sign in through the real OpenID provider p (one for
// the whole suite, reached from the host on loopback) and act as their
// role maps from the provider's groups. An admin and an editor are named by
// GET /api/me with the provider's issuer and subject; the editor writes a
// row but may not list people nor mint a token beyond their role, and a
// token they mint calls a row with a receipt that names them and verifies;
// a person in no mapped group has no rights; a role narrowed at the
// provider narrows, at its next request, a token minted before.
func suitePeople(t *testing.T, tg *target, up *upstream, p *idp) {
	h := tg.host
	p.Restore(t, "carol")
	t.Cleanup(func() { p.Restore(t, "carol") })
	createRow(t, h, map[string]any{"key": "S_PEOPLE_ECHO", "type": "http", "target": "GET " + up.URL + "/people?q=$1", "category": "people_suite"})

	me := func(who personAt, role string, sub string) map[string]any {
		t.Helper()
		got := who.do(t, req{Method: "GET", Path: "/api/me"})
		expect(t, got, 200, map[string]any{"ok": true, "kind": "person"})
		person, _ := got.JSON["person"].(map[string]any)
		if person["issuer"] != p.Issuer || person["subject"] != sub || person["role"] != role {
			t.Fatalf("GET /api/me as %s: want role %q, issuer %s: %s", sub, role, p.Issuer, got.Raw)
		}
		return person
	}
	alice := asPerson(h, signIn(t, h.URL, "alice"))
	me(alice, "admin", "alice")
	bob := asPerson(h, signIn(t, h.URL, "bob"))
	bobID := me(bob, "editor", "bob")["id"].(string)

	// The editor writes a row.
	expect(t, bob.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "S_PEOPLE_BOB", "type": "http",
		"target": "GET " + up.URL + "/bob", "category": "people_suite", "content": "# WHAT: written by a person"}}), 201, map[string]any{"ok": true})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_PEOPLE_BOB"}), 200, map[string]any{"category": "people_suite"})
	// People are the admin's, not the editor's.
	expect(t, bob.do(t, req{Method: "GET", Path: "/api/people"}), 403, map[string]any{"error": "role_forbids:editor:people"})
	list := alice.do(t, req{Method: "GET", Path: "/api/people"})
	expect(t, list, 200, map[string]any{"ok": true})
	if !strings.Contains(string(list.Raw), bobID) {
		t.Fatalf("the admin's list of people has no %s: %s", bobID, list.Raw)
	}

	// A token the editor mints is theirs, within their role: not the
	// approve right their role lacks.
	expect(t, bob.do(t, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"name": "bob-approves", "categories": []string{"people_suite"}, "approve": true}}),
		403, map[string]any{"error": "role_forbids:editor:approve"})
	got := bob.do(t, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"name": "bob-agent", "categories": []string{"people_suite"}}})
	expect(t, got, 201, map[string]any{"ok": true})
	bobToken := got.JSON["token"].(string)
	call := tokenCall(t, h, bobToken, "S_PEOPLE_ECHO", "from bob")
	expect(t, call, 200, map[string]any{"ok": true, "ran": true})
	confirm := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + proof(t, call)["invocation_id"].(string), NoAuth: true})
	expect(t, confirm, 200, map[string]any{"confirmed": true, "status": "PROVEN_MATERIAL_RESULT"})
	if rc := confirm.JSON["receipt"].(map[string]any); rc["person_iss"] != p.Issuer || rc["person_sub"] != "bob" {
		t.Fatalf("the receipt of bob's token's call does not name bob at %s: %s", p.Issuer, confirm.Raw)
	}

	// A call of bob's token that waits for approval is decided by a person
	// with the right, never by its own person: bob (editor) may not, erin
	// (approver) may, but not a call of her own token. The approval's
	// receipt and the approved call's name erin.
	createRow(t, h, map[string]any{"key": "S_PEOPLE_PAY", "type": "http", "target": "GET " + up.URL + "/people-pay?q=$1", "category": "people_suite",
		"content": "# WHAT: pay a named supplier (people suite)", "approval": 1})
	waiting := tokenCall(t, h, bobToken, "S_PEOPLE_PAY", "acme")
	id := pendingID(t, waiting)
	expect(t, bob.do(t, req{Method: "POST", Path: "/api/approvals/" + id + "/approve"}), 403,
		map[string]any{"error": "approve_forbidden:person:" + bobID})
	erin := asPerson(h, signIn(t, h.URL, "erin"))
	erinID := me(erin, "approver", "erin")["id"].(string)
	got = erin.do(t, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"name": "erin-agent", "categories": []string{"people_suite"}}})
	expect(t, got, 201, map[string]any{"ok": true})
	own := pendingID(t, tokenCall(t, h, got.JSON["token"].(string), "S_PEOPLE_PAY", "erin's own"))
	if d := erin.do(t, req{Method: "POST", Path: "/api/approvals/" + own + "/approve"}); d.Status != 403 {
		t.Fatalf("erin approved a call of her own token: %d %s", d.Status, d.Raw)
	}
	d := erin.do(t, req{Method: "POST", Path: "/api/approvals/" + id + "/approve", Body: map[string]any{"reason": "checked the supplier"}})
	expect(t, d, 200, map[string]any{"ok": true})
	if rc := confirmed(t, h, d.JSON["invocation_id"].(string), "RECORDED_NOT_MATERIAL"); rc["actor"] != "person:"+erinID || rc["person_sub"] != "erin" {
		t.Fatalf("the approval's receipt does not name erin (%s): %v", erinID, rc)
	}
	ran := approvedCall2(t, h, bobToken, "S_PEOPLE_PAY", "acme", id)
	expect(t, ran, 200, map[string]any{"ok": true, "ran": true})
	if rc := confirmed(t, h, proof(t, ran)["invocation_id"].(string), "PROVEN_MATERIAL_RESULT"); rc["approver"] != "person:"+erinID || rc["person_sub"] != "bob" {
		t.Fatalf("the approved call's receipt does not name its approver erin (%s) and its caller bob: %v", erinID, rc)
	}

	// In no mapped group: signed in, named, and nothing more.
	dave := asPerson(h, signIn(t, h.URL, "dave"))
	me(dave, "", "dave")
	expect(t, dave.do(t, req{Method: "GET", Path: "/api/directory"}), 403, map[string]any{"error": "role_forbids:none:read"})
	expect(t, dave.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "S_PEOPLE_ECHO", "body": "x"}}), 403,
		map[string]any{"error": "role_forbids:none:call", "ran": false})
	expect(t, dave.do(t, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"name": "dave", "categories": []string{"people_suite"}}}), 403,
		map[string]any{"error": "role_forbids:none:call"})

	// A caller mints a token; the provider then moves them to a group
	// that maps to viewer: once they sign in again, their token calls no more.
	carol := asPerson(h, signIn(t, h.URL, "carol"))
	me(carol, "caller", "carol")
	got = carol.do(t, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"name": "carol-agent", "categories": []string{"people_suite"}}})
	expect(t, got, 201, map[string]any{"ok": true})
	carolToken := got.JSON["token"].(string)
	expect(t, tokenCall(t, h, carolToken, "S_PEOPLE_ECHO", "from carol"), 200, map[string]any{"ok": true, "ran": true})
	p.SetGroups(t, "carol", "tools-viewers")
	carol = asPerson(h, signIn(t, h.URL, "carol"))
	me(carol, "viewer", "carol")
	refused(t, h, tokenCall(t, h, carolToken, "S_PEOPLE_ECHO", "from carol"), 403, "role_forbids:viewer:call")
	expect(t, asToken(t, h, carolToken, req{Method: "GET", Path: "/api/directory/S_PEOPLE_ECHO"}), 200, map[string]any{"key": "S_PEOPLE_ECHO"})
}
