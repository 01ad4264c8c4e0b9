package test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Token exchange (RFC 8693) instead of a stored connection: the host signs a
// subject token naming the calling credential and exchanges it at a real
// OpenID provider on loopback (test/oidcprovider registers the grant), which
// maps the holder to its own account. Two callers, two upstream accounts,
// each its own token, checked by an upstream that asks the provider's
// userinfo endpoint; the exchanged token is reused until it nears its expiry,
// then exchanged again; a subject the provider does not accept, or one it
// finds expired, gets a stable code and changes nothing; no token value is
// readable in any answer, receipt, log line or the database file.
func TestTokenExchange(t *testing.T) {
	exchangeOn(t, func(t *testing.T, env ...string) *host {
		return startHost(t, allowLoopback, env...)
	})
}

// exchangeOn runs the token exchange test on the host start starts with env.
func exchangeOn(t *testing.T, start func(t *testing.T, env ...string) *host) {
	const secret = "client-secret-8a41f0"
	const ttl = 8 // seconds an exchanged access token lives
	trust := filepath.Join(t.TempDir(), "subjects.json")
	issuer := oidcProvider(t, "http://127.0.0.1:1/unused", secret, ttl, "SUBJECTS_FILE="+trust, "LATE_SKEW=300")
	up := newWhoami(t, issuer)
	provider := func(client string) map[string]any {
		return map[string]any{"discovery_url": issuer + "/.well-known/openid-configuration", "client_id": client,
			"client_secret_env": "STS_CLIENT_SECRET", "scopes": []string{"openid"}, "token_exchange": map[string]any{"audience": up.URL}}
	}
	cfg, _ := json.Marshal(map[string]any{"providers": map[string]any{"sts": provider("rowcall-sts"), "late": provider("rowcall-late")}})
	key := make([]byte, 32)
	rand.Read(key)
	h := start(t, "ROWCALL_CONNECTIONS="+string(cfg), "ROWCALL_CONNECTIONS_KEY=k1:"+base64.StdEncoding.EncodeToString(key), "STS_CLIENT_SECRET="+secret)
	createRow(t, h, map[string]any{"key": "WHOAMI", "type": "http", "target": "GET " + up.URL + "/whoami", "auth": "bearer:connection:sts"})
	createRow(t, h, map[string]any{"key": "LATE", "type": "http", "target": "GET " + up.URL + "/whoami", "auth": "bearer:connection:late"})
	alice, aliceID, _ := mint(t, h, map[string]any{"keys": []string{"WHOAMI", "LATE"}})
	bob, bobID, _ := mint(t, h, map[string]any{"keys": []string{"WHOAMI"}})
	carol, carolID, _ := mint(t, h, map[string]any{"keys": []string{"WHOAMI"}})
	linked, _ := json.Marshal(map[string]any{"issuer": h.URL, "subjects": map[string]string{aliceID: "alice", bobID: "bob"}})
	os.WriteFile(trust, linked, 0o600)

	var answers []string
	call := func(token, key string, shape bool) resp {
		t.Helper()
		got := asToken(t, h, token, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": key, "shape": shape}})
		answers = append(answers, string(got.Raw))
		return got
	}
	refused := func(got resp, key, provider, why string) {
		t.Helper()
		res, _ := got.JSON["result"].(string)
		if !strings.HasPrefix(res, "ERR:http:"+key+":ERR:auth:exchange_refused:"+provider) || !strings.Contains(res, why) {
			t.Fatalf("want exchange_refused:%s (%s): %s", provider, why, got.Raw)
		}
	}

	// The subject tokens' keys are published where the provider reads them.
	jwks := h.do(t, req{Method: "GET", Path: "/.well-known/jwks.json", NoAuth: true})
	if keys, _ := jwks.JSON["keys"].([]any); jwks.Status != http.StatusOK || len(keys) != 1 || keys[0].(map[string]any)["kid"] != "k1" {
		t.Fatalf("jwks: %s", jwks.Raw)
	}
	meta := h.do(t, req{Method: "GET", Path: "/.well-known/openid-configuration", NoAuth: true})
	expect(t, meta, http.StatusOK, map[string]any{"jwks_uri": h.URL + "/.well-known/jwks.json"})

	for _, c := range []struct{ token, who string }{{alice, "alice"}, {bob, "bob"}, {alice, "alice"}} {
		expect(t, call(c.token, "WHOAMI", false), http.StatusOK, map[string]any{"ok": true, "result": "HTTP 200:you are " + c.who})
	}
	seen := up.seen()
	if len(seen) != 3 || seen[0] == seen[1] || seen[2] != seen[0] {
		t.Fatalf("tokens at the upstream: want alice's, bob's, alice's again (cached), got %d, %v %v", len(seen), seen[0] != seen[1], seen[2] == seen[0])
	}

	// A subject the provider links to no account, and a subject token the
	// provider finds expired: a stable code, nothing sent upstream, and
	// alice's exchanged token is the one she had.
	refused(call(carol, "WHOAMI", false), "WHOAMI", "sts", carolID)
	refused(call(alice, "LATE", false), "LATE", "late", "invalid_grant")
	if n := len(up.seen()); n != 3 {
		t.Fatalf("a refused exchange reached the upstream (%d calls)", n)
	}
	expect(t, call(alice, "WHOAMI", false), http.StatusOK, map[string]any{"result": "HTTP 200:you are alice"})
	if s := up.seen(); s[len(s)-1] != seen[0] {
		t.Fatal("a refused exchange changed alice's token")
	}

	// Shape mode names the provider, never a token, and exchanges nothing.
	plan, _ := call(bob, "WHOAMI", true).JSON["shape"].(map[string]any)
	if plan["connection"] != "sts" || plan["headers"].(map[string]any)["Authorization"] != nil {
		t.Fatalf("shape: %v", plan)
	}
	// Nothing to connect: the host exchanges, and stores nothing.
	expect(t, asToken(t, h, alice, req{Method: "POST", Path: "/api/connections/sts"}), http.StatusBadRequest, map[string]any{"error": "invalid_request"})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/connections"}), http.StatusOK, map[string]any{"connections": []any{}})

	// Near its expiry, alice's token is exchanged again, for the same account.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		expect(t, call(alice, "WHOAMI", false), http.StatusOK, map[string]any{"result": "HTTP 200:you are alice"})
		if s := up.seen(); s[len(s)-1] != seen[0] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the exchanged token was used past its expiry")
		}
	}
	unreadable(t, h, answers, up.seen(), secret)
}
