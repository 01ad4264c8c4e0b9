package test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/sqlstore/libsql"
)

// TestTenantIsolation: one host serving two tenants (serve --tenants, at
// most one open at a time, so every switch closes one and opens the other;
// each in its own SQLite file, and each in its own sqld namespace),
// acme and globex, with the same row key, tokens, an OAuth client and
// receipts each. Nothing of one exists in the other: its owner key and
// tokens are unknown credentials there, its receipts unknown ids (on the API
// and the receipt page), its client an unknown client, its rows absent from
// ask and /mcp; the same key calls each tenant's own row.
//
//	go test ./test -run TestTenantIsolation
func TestTenantIsolation(t *testing.T) {
	t.Run("file", func(t *testing.T) { tenantIsolation(t, nil) })
	t.Run("sqld", func(t *testing.T) {
		flags, _ := sqldNamespaces(t)
		tenantIsolation(t, flags)
	})
}

// tenantIsolation runs TestTenantIsolation on a host started with flags.
func tenantIsolation(t *testing.T, flags []string) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"tenant":%q,"q":%q}`, strings.TrimPrefix(r.URL.Path, "/"), r.URL.Query().Get("q"))
	})
	op := startHost(t, append(append(append([]string{}, allowLoopback...), "--tenants", "--tenants-open", "1"), flags...))
	tn := map[string]*host{}
	for _, name := range []string{"acme", "globex"} {
		got := operator(t, op, req{Method: "POST", Path: "/operator/tenants", Body: map[string]any{"name": name}})
		expect(t, got, 201, map[string]any{"ok": true, "name": name, "url": op.URL + "/t/" + name})
		tn[name] = &host{URL: got.JSON["url"].(string), Key: got.JSON["owner_key"].(string), Data: filepath.Join(op.Data, "tenants", name)}
	}
	acme, globex := tn["acme"], tn["globex"]
	type held struct{ token, receipt, client string }
	of := map[string]held{}
	for name, h := range tn {
		createRow(t, h, map[string]any{"key": "SAME_KEY", "type": "http", "target": "GET " + up.URL + "/" + name + "?q=$1", "category": "shared",
			"content": "# WHAT: look up a " + name + " shipment by its tracking number"})
		secret, _, _ := mint(t, h, map[string]any{"name": name + "-agent", "categories": []string{"shared"}})
		call := tokenCall(t, h, secret, "SAME_KEY", "17")
		expect(t, call, 200, map[string]any{"ok": true})
		if !strings.Contains(string(call.Raw), `\"tenant\":\"`+name+`\"`) {
			t.Fatalf("SAME_KEY in %s called another tenant's row: %s", name, call.Raw)
		}
		of[name] = held{secret, proof(t, call)["invocation_id"].(string), registerClient(t, h, name+"'s agent").id}
	}

	// The other tenant's credentials are unknown credentials here.
	for _, c := range []struct {
		h      *host
		secret string
	}{{globex, acme.Key}, {globex, of["acme"].token}, {acme, globex.Key}, {acme, of["globex"].token}} {
		expect(t, c.h.do(t, req{Method: "GET", Path: "/api/directory", NoAuth: true, Header: map[string]string{"Authorization": "Bearer " + c.secret}}),
			401, map[string]any{"error": "unauthorized"})
		expect(t, tokenCall(t, c.h, c.secret, "SAME_KEY", "18"), 401, nil)
		init := c.h.do(t, req{Method: "POST", Path: "/mcp", NoAuth: true, Header: map[string]string{"Authorization": "Bearer " + c.secret, "Accept": "application/json, text/event-stream"},
			Body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "t", "version": "1"}}}})
		if init.Status != 401 {
			t.Fatalf("/mcp in %s with another tenant's credential: %d %s", c.h.URL, init.Status, init.Raw)
		}
	}
	// Another tenant's receipt is an unknown id, on the API and on the
	// receipt page: the same answers as for an id that never was.
	for _, path := range []string{"/api/dispatch?confirm=", "/receipt/"} {
		foreign := globex.do(t, req{Method: "GET", Path: path + of["acme"].receipt, NoAuth: true})
		never := globex.do(t, req{Method: "GET", Path: path + "inv_" + strings.Repeat("0", len(of["acme"].receipt)-4), NoAuth: true})
		if foreign.Status != never.Status || foreign.JSON["error"] != never.JSON["error"] || foreign.Status == 200 {
			t.Fatalf("%s of acme's receipt in globex: %d %s; of an id that never was: %d %s", path, foreign.Status, foreign.Raw, never.Status, never.Raw)
		}
	}
	// Another tenant's OAuth client is an unknown client.
	foreign := &oauthClient{h: globex, id: of["acme"].client, verifier: strings.Repeat("v", 43)}
	never := &oauthClient{h: globex, id: "rcl_" + strings.Repeat("0", max(len(of["acme"].client)-4, 1)), verifier: strings.Repeat("v", 43)}
	if a, b := foreign.authorize(t, nil), never.authorize(t, nil); a.StatusCode != b.StatusCode || a.StatusCode < 400 {
		t.Fatalf("acme's OAuth client at globex: %d; a client that never was: %d", a.StatusCode, b.StatusCode)
	}
	// Ask finds each tenant's own row only; the receipts each tenant's own.
	for name, h := range tn {
		got := h.do(t, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape("look up a shipment by tracking number") + "&limit=5"})
		expect(t, got, 200, nil)
		if raw := string(got.Raw); !strings.Contains(raw, name+" shipment") || strings.Contains(raw, otherTenant(name)+" shipment") {
			t.Fatalf("ask in %s: %s", name, raw)
		}
		receipts := h.do(t, req{Method: "GET", Path: "/api/receipts"})
		if raw := string(receipts.Raw); !strings.Contains(raw, of[name].receipt) || strings.Contains(raw, of[otherTenant(name)].receipt) {
			t.Fatalf("the receipts of %s: %s", name, raw)
		}
	}
}

func otherTenant(name string) string {
	if name == "acme" {
		return "globex"
	}
	return "acme"
}

// operator sends r to op's operator API with its key.
func operator(t *testing.T, op *host, r req) resp {
	t.Helper()
	r.NoAuth = true
	r.Header = map[string]string{"Authorization": "Bearer " + op.Key}
	return op.do(t, r)
}

// TestTenantOperator: the operator's API creates, lists, suspends, resumes,
// exports and deletes tenants; names that are not a tenant's are refused
// before anything is created, whatever the trick (case, path, look-alikes,
// length), on the operator's API and in the tenant's path; a deleted
// tenant's folder is gone, its last checkpoint kept, and its URL answers as
// one that never was.
func TestTenantOperator(t *testing.T) {
	t.Run("file", func(t *testing.T) { tenantOperator(t, nil) })
	t.Run("sqld", func(t *testing.T) {
		flags, _ := sqldNamespaces(t)
		tenantOperator(t, flags)
	})
}

// tenantOperator runs TestTenantOperator on a host started with flags.
func tenantOperator(t *testing.T, flags []string) {
	op := startHost(t, append(append(append([]string{}, allowLoopback...), "--tenants"), flags...))
	expect(t, op.do(t, req{Method: "GET", Path: "/operator/tenants", NoAuth: true, Header: map[string]string{"Authorization": "Bearer rk_wrong"}}),
		401, map[string]any{"error": "unauthorized"})
	expect(t, op.do(t, req{Method: "GET", Path: "/operator/tenants"}), 401, map[string]any{"error": "unauthorized"}) // an owner key is not the operator's

	for _, bad := range []string{"", "ab", "Acme", "ACME", "-acme", "acme-", "acme_co", "acme.co", "acme/x", "../acme", "acme%2F..", "ａcme", "acme\u200b",
		"аcme" /* Cyrillic а */, "acme ", strings.Repeat("a", 64), "t/acme"} {
		expect(t, operator(t, op, req{Method: "POST", Path: "/operator/tenants", Body: map[string]any{"name": bad}}), 400,
			map[string]any{"error": "invalid_tenant_name"})
	}
	entries, _ := os.ReadDir(filepath.Join(op.Data, "tenants"))
	if len(entries) != 0 {
		t.Fatalf("refused names left %d entries under tenants/", len(entries))
	}
	got := operator(t, op, req{Method: "POST", Path: "/operator/tenants", Body: map[string]any{"name": "acme"}})
	expect(t, got, 201, map[string]any{"ok": true})
	acme := &host{URL: got.JSON["url"].(string), Key: got.JSON["owner_key"].(string)}
	expect(t, operator(t, op, req{Method: "POST", Path: "/operator/tenants", Body: map[string]any{"name": "acme"}}), 409, map[string]any{"error": "tenant_exists:acme"})
	expect(t, operator(t, op, req{Method: "POST", Path: "/operator/tenants", Body: map[string]any{"name": "zeta", "quota": 1}}), 400, map[string]any{"error": "malformed_json"})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"ok":true}`) })
	createRow(t, acme, map[string]any{"key": "OP_ROW", "type": "http", "target": "GET " + up.URL + "/op"})
	expect(t, acme.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "OP_ROW", "body": ""}}), 200, map[string]any{"ok": true})

	// In the path: the same refusals; an unknown tenant is unknown.
	for _, path := range []string{"/t/ACME/api/directory", "/t/../t/acme/api/directory", "/t/acme%2F../api/directory", "/t/ab/api/directory", "/t/аcme/api/directory"} {
		expect(t, op.do(t, req{Method: "GET", Path: path, NoAuth: true, Header: map[string]string{"Authorization": "Bearer " + acme.Key}}), 400,
			map[string]any{"error": "invalid_tenant_name"})
	}
	expect(t, op.do(t, req{Method: "GET", Path: "/t/nobody/api/directory"}), 404, map[string]any{"error": "unknown_tenant:nobody"})
	expect(t, op.do(t, req{Method: "GET", Path: "/api/directory"}), 404, map[string]any{"error": "not_found"})
	// The well-known documents whose URL inserts the tenant's path (RFC 8414, RFC 9728).
	meta := op.do(t, req{Method: "GET", Path: "/.well-known/oauth-authorization-server/t/acme", NoAuth: true})
	expect(t, meta, 200, map[string]any{"issuer": acme.URL})
	expect(t, op.do(t, req{Method: "GET", Path: "/.well-known/oauth-protected-resource/t/acme/mcp", NoAuth: true}), 200, map[string]any{"resource": acme.URL + "/mcp"})

	list := operator(t, op, req{Method: "GET", Path: "/operator/tenants"})
	expect(t, list, 200, map[string]any{"ok": true})
	if ts := list.JSON["tenants"].([]any); len(ts) != 1 || ts[0].(map[string]any)["name"] != "acme" || ts[0].(map[string]any)["rows"] != float64(1) ||
		ts[0].(map[string]any)["storage_bytes"].(float64) <= 0 {
		t.Fatalf("the tenants: %s", list.Raw)
	}

	// A quota of 2 rows, kept in the tenant's database: one more row is
	// written, then neither a row nor an import that would pass it writes
	// anything; removing the quota lifts it.
	expect(t, operator(t, op, req{Method: "PATCH", Path: "/operator/tenants/acme", Body: map[string]any{"quotas": map[string]any{"minutes": 3}}}), 400,
		map[string]any{"error": "invalid_request"})
	set := operator(t, op, req{Method: "PATCH", Path: "/operator/tenants/acme", Body: map[string]any{"quotas": map[string]any{"rows": 2}}})
	expect(t, set, 200, map[string]any{"ok": true})
	if q := set.JSON["tenant"].(map[string]any)["quotas"]; fmt.Sprint(q) != "map[rows:2]" {
		t.Fatalf("the tenant's quotas after PATCH: %s", set.Raw)
	}
	quotaRow := func(key string) map[string]any {
		return map[string]any{"key": key, "type": "http", "target": "GET " + up.URL + "/q", "content": "# WHAT: a row under a quota"}
	}
	expect(t, acme.do(t, req{Method: "POST", Path: "/api/directory", Body: quotaRow("Q_TWO")}), 201, nil)
	expect(t, acme.do(t, req{Method: "POST", Path: "/api/directory", Body: quotaRow("Q_THREE")}), 403, map[string]any{"error": "quota_exceeded:rows"})
	expect(t, acme.do(t, req{Method: "POST", Path: "/api/import", Body: map[string]any{"rows": []any{quotaRow("Q_TWO"), quotaRow("Q_FOUR")}}}), 403,
		map[string]any{"error": "quota_exceeded:rows"})
	expect(t, acme.do(t, req{Method: "POST", Path: "/api/import", Body: map[string]any{"rows": []any{quotaRow("Q_TWO")}}}), 200, nil) // an existing key is no new row
	for _, key := range []string{"Q_THREE", "Q_FOUR"} {
		expect(t, acme.do(t, req{Method: "GET", Path: "/api/directory/" + key}), 404, nil)
	}
	expect(t, operator(t, op, req{Method: "PATCH", Path: "/operator/tenants/acme", Body: map[string]any{"quotas": map[string]any{"rows": nil}}}), 200, nil)
	expect(t, acme.do(t, req{Method: "POST", Path: "/api/directory", Body: quotaRow("Q_THREE")}), 201, nil)

	expect(t, operator(t, op, req{Method: "POST", Path: "/operator/tenants/acme/suspend"}), 200, map[string]any{"ok": true})
	expect(t, acme.do(t, req{Method: "GET", Path: "/api/directory/OP_ROW"}), 403, map[string]any{"error": "tenant_suspended:acme"})
	expect(t, operator(t, op, req{Method: "POST", Path: "/operator/tenants/acme/resume"}), 200, map[string]any{"ok": true})
	expect(t, acme.do(t, req{Method: "GET", Path: "/api/directory/OP_ROW"}), 200, map[string]any{"key": "OP_ROW"})

	// The export: the database file, or for a namespace sqld's SQL dump.
	export := operator(t, op, req{Method: "GET", Path: "/operator/tenants/acme/export"})
	if export.Status != 200 || !strings.HasPrefix(string(export.Raw), "SQLite format 3\x00") && !strings.Contains(string(export.Raw), "OP_ROW") {
		t.Fatalf("export: %d %.80q", export.Status, export.Raw)
	}

	del := operator(t, op, req{Method: "DELETE", Path: "/operator/tenants/acme"})
	expect(t, del, 200, map[string]any{"ok": true, "name": "acme"})
	cp, _ := del.JSON["checkpoint"].(string)
	if !strings.HasPrefix(cp, "rowcall/receipts\n1\n") {
		t.Fatalf("the deletion kept no checkpoint of the chain of 1 receipt: %s", del.Raw)
	}
	if kept, err := os.ReadFile(del.JSON["checkpoint_file"].(string)); err != nil || string(kept) != cp {
		t.Fatalf("the checkpoint file: %v %q", err, kept)
	}
	if _, err := os.Stat(filepath.Join(op.Data, "tenants", "acme")); !os.IsNotExist(err) {
		t.Fatalf("the deleted tenant's folder: %v", err)
	}
	if db, ok := flagValue(flags, "--db"); ok { // the namespace is gone from sqld
		if conn, err := libsql.Open(context.Background(), strings.ReplaceAll(db, "{tenant}", "acme")); err == nil {
			conn.Close()
			t.Fatal("the deleted tenant's namespace still answers")
		}
	}
	expect(t, acme.do(t, req{Method: "GET", Path: "/api/directory/OP_ROW"}), 404, map[string]any{"error": "unknown_tenant:acme"})
	expect(t, operator(t, op, req{Method: "DELETE", Path: "/operator/tenants/acme"}), 404, map[string]any{"error": "unknown_tenant:acme"})
}

// flagValue is the value following name in flags.
func flagValue(flags []string, name string) (string, bool) {
	if i := slices.Index(flags, name); i >= 0 && i+1 < len(flags) {
		return flags[i+1], true
	}
	return "", false
}

// TestTenantCLI: the operator runs `rowcall tenant …` with the operator key
// from the host's data folder; a tenant's owner uses the client commands
// with the tenant's URL and owner key, as with any host.
func TestTenantCLI(t *testing.T) {
	op := startHost(t, append(append([]string{}, allowLoopback...), "--tenants"))
	cli := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(append(os.Environ(), "ROWCALL_OWNER_KEY=", "ROWCALL_OPERATOR_KEY="), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	operatorFlags := []string{"--url", op.URL, "--data", op.Data}
	out, err := cli(nil, append([]string{"tenant", "create", "acme"}, operatorFlags...)...)
	key := accessKey.FindString(out)
	if err != nil || !strings.Contains(out, op.URL+"/t/acme") || key == "" {
		t.Fatalf("tenant create: %v\n%s", err, out)
	}
	if out, err := cli(nil, append([]string{"tenant", "create", "Acme"}, operatorFlags...)...); err == nil || !strings.Contains(out, "invalid_tenant_name") {
		t.Fatalf("tenant create Acme: %v\n%s", err, out)
	}
	if out, err := cli(nil, "tenant", "list", "--url", op.URL, "--data", t.TempDir()); err == nil || !strings.Contains(out, "ROWCALL_OPERATOR_KEY") {
		t.Fatalf("tenant list without the operator key: %v\n%s", err, out)
	}
	tenant := []string{"ROWCALL_OWNER_KEY=" + key}
	acme := &host{URL: op.URL + "/t/acme", Key: key}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"ok":true,"from":"acme"}`) })
	createRow(t, acme, map[string]any{"key": "CLI_ROW", "type": "http", "target": "GET " + up.URL + "/cli"})
	if out, err := cli(tenant, "call", "CLI_ROW", "--url", acme.URL); err != nil || !strings.Contains(out, "acme") {
		t.Fatalf("rowcall call in the tenant: %v\n%s", err, out)
	}
	if out, err := cli(nil, append([]string{"tenant", "quota", "acme", "--rows", "1"}, operatorFlags...)...); err != nil || !strings.Contains(out, `"rows": 1`) {
		t.Fatalf("tenant quota: %v\n%s", err, out)
	}
	if out, err := cli(nil, append([]string{"tenant", "list"}, operatorFlags...)...); err != nil || !regexp.MustCompile(`(?m)^acme\s+1\s+1\s+1\s`).MatchString(out) {
		t.Fatalf("tenant list: %v\n%s", err, out)
	}
	if out, err := cli(nil, append([]string{"tenant", "delete", "acme"}, operatorFlags...)...); err != nil || !strings.Contains(out, "checkpoint") {
		t.Fatalf("tenant delete: %v\n%s", err, out)
	}
	if out, err := cli(tenant, "call", "CLI_ROW", "--url", acme.URL); err == nil || !strings.Contains(out, "unknown_tenant") {
		t.Fatalf("a call in the deleted tenant: %v\n%s", err, out)
	}
}

// accessKey is an owner key as the host makes it: rk_ and 32 bytes in base64url.
var accessKey = regexp.MustCompile(`rk_[A-Za-z0-9_-]{43}`)

// TestTenantAdopt: a single directory's data folder, its host still
// serving, becomes a tenant of another host with `rowcall tenant adopt`: its
// owner key signs in there, its rows answer, a receipt made before is
// confirmed there, and the chain continues: the tenant's export, with the
// calls made before and after, verifies offline as one chain.
func TestTenantAdopt(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"ok":true}`) })
	single := startHost(t, allowLoopback)
	createRow(t, single, map[string]any{"key": "ADOPT_ROW", "type": "http", "target": "GET " + up.URL + "/adopt?q=$1"})
	before := proof(t, tokenlessCall(t, single, "ADOPT_ROW", "before"))["invocation_id"].(string)
	op := startHost(t, append(append([]string{}, allowLoopback...), "--tenants"))
	adopt := func() (string, error) {
		cmd := exec.Command(binary, "tenant", "adopt", "acme", "--from", single.Data, "--data", op.Data)
		cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=", "ROWCALL_RECEIPT_KEY=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := adopt(); err != nil {
		t.Fatalf("tenant adopt: %v\n%s", err, out)
	}
	if out, err := adopt(); err == nil || !strings.Contains(out, "tenant_exists") {
		t.Fatalf("tenant adopt again: %v\n%s", err, out)
	}
	acme := &host{URL: op.URL + "/t/acme", Key: single.Key, Data: filepath.Join(op.Data, "tenants", "acme")}
	expect(t, acme.do(t, req{Method: "GET", Path: "/api/directory/ADOPT_ROW"}), 200, map[string]any{"key": "ADOPT_ROW"})
	confirmed(t, acme, before, "PROVEN_MATERIAL_RESULT")
	after := proof(t, tokenlessCall(t, acme, "ADOPT_ROW", "after"))["invocation_id"].(string)
	chain := verifyChain(t, acme)
	for _, id := range []string{before, after} {
		if !slices.ContainsFunc(chain, func(rc exported) bool { return rc.ID == id }) {
			t.Fatalf("receipt %s is not in the tenant's verified chain", id)
		}
	}
}

// tokenlessCall calls key with body as the owner.
func tokenlessCall(t *testing.T, h *host, key, body string) resp {
	t.Helper()
	got := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": key, "body": body}})
	expect(t, got, 200, map[string]any{"ok": true})
	return got
}
