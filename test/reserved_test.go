package test

import (
	"net/http"
	"testing"

	"github.com/rowcall/rowcall/test/modelserver"
)

// TestSecretsPrefix: with ROWCALL_SECRETS_PREFIX (or --secrets-prefix) a row
// may name only that namespace of variables (and the owner key); a row
// stored before the rule reads nothing outside it.
func TestSecretsPrefix(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	h := startHost(t, []string{"--allow-outbound", "127.0.0.1/32"}, "ROWCALL_SECRETS_PREFIX=ROWS_", "ROWS_KEY=rows-secret-1", "OTHER_KEY=other-secret-2")
	row := map[string]any{"key": "PFX", "type": "http", "target": "GET " + up.URL + "/pfx", "auth": "bearer:OTHER_KEY", "content": "# WHAT: prefix test"}
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), 422,
		map[string]any{"error": "auth_outside_secrets_prefix", "variable": "OTHER_KEY", "secrets_prefix": "ROWS_", "state_changed": false})
	row["auth"] = "bearer:ROWS_KEY"
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), 201, nil)
	expect(t, dispatchCall(t, h, "PFX", ""), 200, map[string]any{"ok": true})
	if got := up.requests()[0].Header.Get("Authorization"); got != "Bearer rows-secret-1" {
		t.Fatalf("the namespaced credential was not sent: %q", got)
	}
	// The owner key stays nameable (the owner gate guards it).
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/PFX", Body: map[string]any{"auth": "bearer:ROWCALL_OWNER_KEY"}}), 200, nil)
	if _, err := h.db(t).Exec(`UPDATE directory SET auth = 'bearer:OTHER_KEY' WHERE key = 'PFX'`); err != nil {
		t.Fatal(err)
	}
	expect(t, dispatchCall(t, h, "PFX", ""), 200, map[string]any{"ok": true})
	if got := up.requests()[1].Header.Get("Authorization"); got != "" {
		t.Fatalf("a variable outside the namespace was sent: %q", got)
	}
}

// TestAgentOffersTokensOnlyWhatTheyMayCall: the tools an agent row offers its
// model, when a token calls it, leave out rows the gate would refuse that
// token (owner-only rows, rows above its risk ceiling).
func TestAgentOffersTokensOnlyWhatTheyMayCall(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = grokKey
	h := startAgentHost(t, ms)
	createRow(t, h, map[string]any{"key": "T_OWNER", "type": "http", "category": "tools", "target": "GET " + h.URL + "/api/directory/$1",
		"auth": "bearer:ROWCALL_OWNER_KEY", "content": "# WHAT: Read a row with the owner's key."})
	createRow(t, h, map[string]any{"key": "T_PLAIN", "type": "flow", "category": "tools", "content": "# WHAT: A plain tool.\nT_OWNER: $1"})
	createRow(t, h, agentRowSpec("T_AGENT", "Use tools.", "tools"))
	secret, _, _ := mint(t, h, map[string]any{"categories": []string{"tools", "agents"}, "expires_in": 3600})
	ms.Script(modelserver.Reply{Content: "[REPLY]done[/REPLY]"})
	expect(t, tokenCall(t, h, secret, "T_AGENT", "go"), 200, map[string]any{"ok": true})
	reqs := ms.Requests()
	offered := map[string]bool{}
	for _, tool := range reqs[len(reqs)-1].Chat.Tools {
		offered[tool.Function.Name] = true
	}
	if !offered["T_PLAIN"] || offered["T_OWNER"] {
		t.Fatalf("tools offered to the token's model: %v (want T_PLAIN, not the owner-only T_OWNER)", offered)
	}
}
