package test

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// SCIM 2.0 provisioning (api/scim, docs/security.md "SCIM provisioning"),
// driven over HTTP as Okta or Microsoft Entra ID drive it, on the embedded
// host and on the host over sqld.
//
// The person's session is stored directly in the host's database (a row of
// sessions, as GET /login/callback stores it): a test host names no OpenID
// provider to sign in through. The end-to-end variant, a person signed in
// through the provider of test/oidcprovider and then deprovisioned, goes
// with the sign-in tests once sign-in runs on every host. Everything else a
// person holds is made through the API as they would make it: a token minted
// from their session, an OAuth grant they consented to, a call waiting for
// approval.
// A connection is a row of connections held by their token (the connection
// flow needs a provider of its own; TestConnections drives it).

const (
	scimIssuer  = "https://idp.example.test"
	scimUserURN = "urn:ietf:params:scim:schemas:core:2.0:User"
	scimPatchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	scimErrURN  = "urn:ietf:params:scim:api:messages:2.0:Error"
)

// scimClient is the identity provider's SCIM client of one host.
type scimClient struct {
	h     *host
	token string
}

func (c scimClient) do(t *testing.T, method, path string, body any) resp {
	t.Helper()
	return c.h.do(t, req{Method: method, Path: "/scim/v2" + path, Body: body, NoAuth: true,
		Header: map[string]string{"Authorization": "Bearer " + c.token, "Content-Type": "application/scim+json"}})
}

// scimError checks a SCIM Error answer: status, content type, the Error
// schema, the status as a string, and scimType ("" for none).
func scimError(t *testing.T, got resp, status int, scimType string) {
	t.Helper()
	st, _ := got.JSON["scimType"].(string)
	detail, _ := got.JSON["detail"].(string)
	if got.Status != status || got.Header.Get("Content-Type") != "application/scim+json" || got.JSON["status"] != fmt.Sprint(status) ||
		!strings.Contains(string(got.Raw), `"schemas":["`+scimErrURN+`"]`) || st != scimType || detail == "" {
		t.Fatalf("want a SCIM Error %d %q, got %d %s: %s", status, scimType, got.Status, got.Header.Get("Content-Type"), got.Raw)
	}
}

// patchActive is a PatchOp setting active to value (JSON).
func patchActive(op, value string) map[string]any {
	return map[string]any{"schemas": []string{scimPatchOp}, "Operations": []any{map[string]any{"op": op, "path": "active", "value": value}}}
}

func stamp(d time.Duration) string { return time.Now().Add(d).UTC().Format("2006-01-02T15:04:05.000Z") }

// storeSession stores a live session for person in db and returns its cookie's
// secret (the session's id is the secret's SHA-256, as the host stores it).
func storeSession(t *testing.T, db *sql.DB, person string) string {
	t.Helper()
	secret := "sess_" + strings.NewReplacer("+", "-", "/", "_", "=", "").Replace(randomKey(32))
	if _, err := db.Exec(`INSERT INTO sessions (id, person_id, created_at, expires_at, idle_until) VALUES (?,?,?,?,?)`,
		sha(secret), person, stamp(0), stamp(12*time.Hour), stamp(time.Hour)); err != nil {
		t.Fatal(err)
	}
	return secret
}

// asSession sends r with the session cookie, from the host's own pages.
func asSession(t *testing.T, h *host, secret string, r req) resp {
	t.Helper()
	r.NoAuth = true
	r.Header = map[string]string{"Cookie": "rowcall_session=" + secret, "Origin": h.URL}
	return h.do(t, r)
}

// TestSCIMDeactivation runs scimDeactivation on the embedded host, sqld and
// the worker in workerd (D1).
//
//	go test ./test -run 'TestSCIMDeactivation/worker'
func TestSCIMDeactivation(t *testing.T) {
	for _, b := range backends {
		if b.Name == "inprocess" {
			continue
		}
		t.Run(b.Name, func(t *testing.T) { scimDeactivation(t, b) })
	}
}

// scimDeactivation: a person created by SCIM, given a role, a session, a
// token of their own, an OAuth grant, connections and a call waiting for
// approval, is deactivated by one SCIM PATCH; the next request with each of
// them is refused, the refresh token refreshes nothing, the connections are
// gone, the approval is denied, and the person's receipts are still there,
// naming them, and verify. Then: finding by userName and by the email of a
// person who signed in without one, the refusals (a wrong bearer, an unknown
// id, a malformed PatchOp that changes nothing), activation that revives
// nothing revoked, and DELETE, after which the receipts still verify.
func scimDeactivation(t *testing.T, b backend) {
	token := randomKey(33)
	tg := b.Start(t, []string{"ROWCALL_SCIM_TOKEN=" + token, "ROWCALL_OIDC_ISSUER=" + scimIssuer, "ROWCALL_OIDC_CLIENT_ID=rowcall", "ROWCALL_OIDC_CLIENT_SECRET=unused"})
	h, db := tg.host, tg.DB(t)
	idp := scimClient{h, token}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"ok":true,"q":%q}`, r.URL.Query().Get("q"))
	})
	createRow(t, h, map[string]any{"key": "SCIM_LOOKUP", "type": "http", "target": "GET " + up.URL + "/lookup?q=$1", "category": "scim",
		"content": "# WHAT: Look up an order.\n# ARGS: $1=order"})
	createRow(t, h, map[string]any{"key": "SCIM_REFUND", "type": "http", "target": "POST " + up.URL + "/refund?q=$1", "category": "scim", "approval": 1,
		"content": "# WHAT: Refund an order.\n# ARGS: $1=order"})

	// The provider creates Ada ahead of her first sign-in.
	created := idp.do(t, "POST", "/Users", map[string]any{"schemas": []string{scimUserURN}, "userName": "ada@example.com", "externalId": "00u-ada",
		"name": map[string]any{"givenName": "Ada", "familyName": "Lovelace"}, "emails": []any{map[string]any{"value": "ada@example.com", "type": "work", "primary": true}},
		"active": true})
	expect(t, created, 201, map[string]any{"userName": "ada@example.com", "externalId": "00u-ada", "active": true, "displayName": "Ada Lovelace"})
	id, _ := created.JSON["id"].(string)
	if !strings.HasPrefix(id, "per_") || created.Header.Get("Content-Type") != "application/scim+json" || created.Header.Get("Location") != h.URL+"/scim/v2/Users/"+id {
		t.Fatalf("created: %v %s", created.Header, created.Raw)
	}
	var iss, sub string
	if err := db.QueryRow(`SELECT issuer, subject FROM people WHERE id = ?`, id).Scan(&iss, &sub); err != nil || iss != scimIssuer || sub != "00u-ada" {
		t.Fatalf("the person is bound to %q %q (%v), want the issuer and externalId", iss, sub, err)
	}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/people/" + id, Body: map[string]any{"role": "caller"}}), 200, nil)

	// Everything a person holds: a session, a token they mint, an OAuth
	// grant they consent to, connections, a call waiting for approval.
	session := storeSession(t, db, id)
	expect(t, asSession(t, h, session, req{Method: "GET", Path: "/api/me"}), 200, map[string]any{"kind": "person"})
	minted := asSession(t, h, session, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"name": "ada's script", "categories": []string{"scim"}}})
	expect(t, minted, 201, nil)
	own, ownID := minted.JSON["token"].(string), minted.JSON["id"].(string)
	client := registerClient(t, h, "ada's agent")
	consent := asSession(t, h, session, req{Method: "POST", Path: "/api/oauth/consent/" + consentID(t, h, client.authorize(t, nil)),
		Body: map[string]any{"categories": []string{"scim"}}})
	expect(t, consent, 200, map[string]any{"ok": true})
	grantID := consent.JSON["id"].(string)
	redirect, _ := url.Parse(consent.JSON["redirect"].(string))
	issued := client.exchange(t, redirect.Query().Get("code"))
	expect(t, issued, 200, nil)
	access, refresh := issued.JSON["access_token"].(string), issued.JSON["refresh_token"].(string)
	for _, tok := range []string{ownID, grantID} {
		var person string
		if err := db.QueryRow(`SELECT person_id FROM tokens WHERE id = ?`, tok).Scan(&person); err != nil || person != id {
			t.Fatalf("token %s names %q (%v), want %s", tok, person, err, id)
		}
		if _, err := db.Exec(`INSERT INTO connections (holder, provider, key_id, sealed, created_at, updated_at) VALUES (?, 'crm', 'k1', x'00', ?, ?)`,
			tok, stamp(0), stamp(0)); err != nil {
			t.Fatal(err)
		}
	}
	var calls []string
	for _, secret := range []string{own, access} {
		got := tokenCall(t, h, secret, "SCIM_LOOKUP", "o-17")
		expect(t, got, 200, map[string]any{"ok": true})
		calls = append(calls, proof(t, got)["invocation_id"].(string))
	}
	waiting := tokenCall(t, h, own, "SCIM_REFUND", "o-17")
	approval := pendingID(t, waiting)
	calls = append(calls, waiting.JSON["invocation_id"].(string))

	// One PATCH ends it all.
	off := idp.do(t, "PATCH", "/Users/"+id, patchActive("replace", "false"))
	expect(t, off, 200, map[string]any{"id": id, "active": false})

	expect(t, asSession(t, h, session, req{Method: "GET", Path: "/api/me"}), 401, nil)
	expect(t, asSession(t, h, session, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "SCIM_LOOKUP", "body": "o-18"}}), 401, nil)
	for _, secret := range []string{own, access} {
		expect(t, asToken(t, h, secret, req{Method: "GET", Path: "/api/directory?limit=1"}), 401, map[string]any{"error": "unauthorized"})
		expect(t, tokenCall(t, h, secret, "SCIM_LOOKUP", "o-18"), 401, nil)
	}
	expect(t, client.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}), 400, map[string]any{"error": "invalid_grant"})
	var conns, live int
	if err := db.QueryRow(`SELECT COUNT(*) FROM connections WHERE holder IN (?, ?)`, ownID, grantID).Scan(&conns); err != nil || conns != 0 {
		t.Fatalf("%d connections of the person left (%v)", conns, err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM sessions WHERE person_id = ? AND revoked_at = ''`, id).Scan(&live); err != nil || live != 0 {
		t.Fatalf("%d sessions of the person live (%v)", live, err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM tokens WHERE person_id = ? AND revoked_at IS NULL`, id).Scan(&live); err != nil || live != 0 {
		t.Fatalf("%d tokens of the person not revoked (%v)", live, err)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/approvals/" + approval}), 200, map[string]any{"status": "denied", "caller": ownID})
	if n := len(slices.DeleteFunc(up.requests(), func(r seenRequest) bool { return r.Path != "/lookup" })); n != 2 {
		t.Fatalf("the upstream saw %d lookups, want the 2 made before the deactivation", n)
	}
	for i, inv := range calls {
		status := "PROVEN_MATERIAL_RESULT"
		if i == 2 {
			status = "RECORDED_NOT_MATERIAL"
		}
		rc := confirmed(t, h, inv, status)
		if rc["person_iss"] != scimIssuer || rc["person_sub"] != "00u-ada" {
			t.Fatalf("receipt %s names %v %v, want the person", inv, rc["person_iss"], rc["person_sub"])
		}
	}

	t.Run("find", func(t *testing.T) {
		// Grace signed in before provisioning (just in time: the row sign-in
		// stores), without a preferred username.
		if _, err := db.Exec(`INSERT INTO people (id, issuer, subject, email, name, user_name, role, role_from, created_at, seen_at)
			VALUES ('per_00000000000000a1', ?, 'sub-grace', 'Grace.Hopper@example.com', 'Grace Hopper', '', 'caller', 'groups', ?, ?)`,
			scimIssuer, stamp(0), stamp(0)); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"ada@example.com": id, "ADA@example.com": id, "grace.hopper@example.com": "per_00000000000000a1", "nobody@example.com": ""} {
			got := idp.do(t, "GET", "/Users?filter="+url.QueryEscape(`userName eq "`+name+`"`), nil)
			res, _ := got.JSON["Resources"].([]any)
			if got.Status != 200 || !strings.Contains(string(got.Raw), `"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"]`) ||
				(want == "") != (len(res) == 0) || want != "" && (len(res) != 1 || res[0].(map[string]any)["id"] != want) {
				t.Fatalf("userName eq %q: %s, want %q", name, got.Raw, want)
			}
		}
		scimError(t, idp.do(t, "GET", "/Users?filter="+url.QueryEscape(`emails.value co "grace"`), nil), 400, "invalidFilter")
	})

	t.Run("refused", func(t *testing.T) {
		for _, bearer := range []string{token + "x", h.Key, ""} {
			scimError(t, scimClient{h, bearer}.do(t, "GET", "/Users", nil), 401, "")
		}
		expect(t, h.do(t, req{Method: "GET", Path: "/scim/v2/Users"}), 401, nil) // the owner key is not the SCIM token
		scimError(t, idp.do(t, "GET", "/Users/per_ffffffffffffffff", nil), 404, "")
		scimError(t, idp.do(t, "PATCH", "/Users/per_ffffffffffffffff", patchActive("replace", "false")), 404, "")
		scimError(t, idp.do(t, "POST", "/Users", map[string]any{"schemas": []string{scimUserURN}, "userName": "bob@example.com"}), 400, "invalidValue")
	})

	t.Run("malformed PatchOp changes nothing", func(t *testing.T) {
		grace := storeSession(t, db, "per_00000000000000a1")
		expect(t, asSession(t, h, grace, req{Method: "GET", Path: "/api/me"}), 200, nil)
		for _, body := range []any{
			map[string]any{"schemas": []string{scimPatchOp}, "Operations": []any{
				map[string]any{"op": "replace", "path": "active", "value": false}, map[string]any{"op": "obliterate", "path": "userName", "value": "x"}}},
			map[string]any{"Operations": []any{map[string]any{"op": "replace", "path": "active", "value": false}}},
			`{"schemas":["` + scimPatchOp + `"],"Operations":[{"op":"replace","path":"active","value":false}`,
		} {
			scimError(t, idp.do(t, "PATCH", "/Users/per_00000000000000a1", body), 400, "invalidSyntax")
		}
		var disabled string
		if err := db.QueryRow(`SELECT disabled_at FROM people WHERE id = 'per_00000000000000a1'`).Scan(&disabled); err != nil || disabled != "" {
			t.Fatalf("a refused PatchOp disabled the person at %q (%v)", disabled, err)
		}
		expect(t, asSession(t, h, grace, req{Method: "GET", Path: "/api/me"}), 200, map[string]any{"kind": "person"})
		// Entra ID's form ends it.
		expect(t, idp.do(t, "PATCH", "/Users/per_00000000000000a1", patchActive("Replace", "False")), 200, map[string]any{"active": false})
		expect(t, asSession(t, h, grace, req{Method: "GET", Path: "/api/me"}), 401, nil)
	})

	t.Run("activated again, nothing revoked revives", func(t *testing.T) {
		expect(t, idp.do(t, "PATCH", "/Users/"+id, map[string]any{"schemas": []string{scimPatchOp},
			"Operations": []any{map[string]any{"op": "replace", "value": map[string]any{"active": true}}}}), 200, map[string]any{"active": true})
		expect(t, asSession(t, h, session, req{Method: "GET", Path: "/api/me"}), 401, nil)
		expect(t, asToken(t, h, own, req{Method: "GET", Path: "/api/directory?limit=1"}), 401, nil)
		expect(t, asToken(t, h, access, req{Method: "GET", Path: "/api/directory?limit=1"}), 401, nil)
	})

	t.Run("delete", func(t *testing.T) {
		del := idp.do(t, "DELETE", "/Users/"+id, nil)
		if del.Status != 204 {
			t.Fatalf("DELETE: %d %s", del.Status, del.Raw)
		}
		scimError(t, idp.do(t, "GET", "/Users/"+id, nil), 404, "")
		var left int
		db.QueryRow(`SELECT COUNT(*) FROM people WHERE id = ?`, id).Scan(&left)
		if left != 0 {
			t.Fatal("the person is still stored")
		}
		for _, inv := range calls[:2] {
			if rc := confirmed(t, h, inv, "PROVEN_MATERIAL_RESULT"); rc["person_sub"] != "00u-ada" {
				t.Fatalf("receipt %s after DELETE: %v", inv, rc)
			}
		}
		chain := verifyChain(t, h)
		for _, inv := range calls {
			if !slices.ContainsFunc(chain, func(rc exported) bool { return rc.ID == inv }) {
				t.Fatalf("receipt %s is not in the verified chain", inv)
			}
		}
	})
}

// --scim-token and ROWCALL_SCIM_TOKEN turn SCIM on, the flag winning; none
// leaves /scim/v2 unserved; a token too short to be secret stops the host
// with the setting to fix.
func TestSCIMTokenSetting(t *testing.T) {
	envToken, flagToken := randomKey(33), randomKey(33)
	for _, c := range []struct {
		flags  []string
		env    []string
		bearer string
		status int
	}{
		{nil, nil, envToken, 404},
		{nil, []string{"ROWCALL_SCIM_TOKEN=" + envToken}, envToken, 200},
		{[]string{"--scim-token", flagToken}, []string{"ROWCALL_SCIM_TOKEN=" + envToken}, flagToken, 200},
		{[]string{"--scim-token", flagToken}, []string{"ROWCALL_SCIM_TOKEN=" + envToken}, envToken, 401},
	} {
		h := startHost(t, c.flags, c.env...)
		got := scimClient{h, c.bearer}.do(t, "GET", "/ServiceProviderConfig", nil)
		if got.Status != c.status {
			t.Fatalf("flags %v env %v: %d %s, want %d", c.flags, c.env, got.Status, got.Raw, c.status)
		}
	}
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--no-examples")
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=", "ROWCALL_EMBED_PROVIDER=off", "ROWCALL_SCIM_TOKEN=short")
	done := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	out, err := cmd.CombinedOutput()
	done.Stop()
	if err == nil || !strings.Contains(string(out), "ROWCALL_SCIM_TOKEN is 5 characters; a SCIM token is at least 32") {
		t.Fatalf("serve with a short SCIM token: %v\n%s", err, out)
	}
}
