package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mint creates a capability token and returns its secret and id.
func mint(t *testing.T, h *host, spec map[string]any) (secret, id string, scope map[string]any) {
	t.Helper()
	got := h.do(t, req{Method: "POST", Path: "/api/tokens", Body: spec})
	expect(t, got, 201, map[string]any{"ok": true})
	return got.JSON["token"].(string), got.JSON["id"].(string), got.JSON["scope"].(map[string]any)
}

// asToken sends r with the token as Authorization: Bearer.
func asToken(t *testing.T, h *host, token string, r req) resp {
	t.Helper()
	r.NoAuth = true
	if r.Header == nil {
		r.Header = map[string]string{}
	}
	r.Header["Authorization"] = "Bearer " + token
	return h.do(t, r)
}

func tokenCall(t *testing.T, h *host, token, key, body string) resp {
	t.Helper()
	return asToken(t, h, token, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": key, "body": body}})
}

// refused checks a gate refusal: status, literal reason, nothing ran, and the
// refusal recorded as a receipt that is not material.
func refused(t *testing.T, h *host, got resp, status int, reason string) {
	t.Helper()
	expect(t, got, status, map[string]any{"error": reason, "ran": false, "state_changed": false})
	id, _ := got.JSON["invocation_id"].(string)
	if id == "" {
		t.Fatalf("refusal not recorded: %s", got.Raw)
	}
	c := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id})
	expect(t, c, 200, map[string]any{"status": "RECORDED_NOT_MATERIAL"})
	if o := c.JSON["receipt"].(map[string]any)["outcome"]; o != "refused:"+reason {
		t.Fatalf("receipt outcome %v", o)
	}
}

func TestTokensMintListRevoke(t *testing.T) {
	h := startHost(t, nil)
	createRow(t, h, map[string]any{"key": "A", "type": "http", "target": "GET http://example.test/", "category": "tools"})
	secret, id, scope := mint(t, h, map[string]any{"name": "ci", "keys": []string{"A"}, "expires_in": 3600})
	if !strings.HasPrefix(secret, "rct_") || !strings.HasPrefix(id, "tok_") || scope["risk_ceiling"] != "low" || scope["audience"] != "rowcall" {
		t.Fatalf("minted %s %s %v", secret, id, scope)
	}
	// Stored only as a hash; listed without secrets.
	var stored int
	h.db(t).QueryRow(`SELECT COUNT(*) FROM tokens WHERE secret_sha256 = ? AND id = ?`, sha(secret), id).Scan(&stored)
	if stored != 1 {
		t.Fatal("token not stored as the SHA-256 of its secret")
	}
	list := h.do(t, req{Method: "GET", Path: "/api/tokens"})
	expect(t, list, 200, nil)
	if strings.Contains(string(list.Raw), secret) || !strings.Contains(string(list.Raw), id) {
		t.Fatalf("token list %s", list.Raw)
	}
	// A token cannot mint, list, revoke or edit the directory.
	for _, r := range []req{
		{Method: "POST", Path: "/api/tokens", Body: map[string]any{"keys": []string{"A"}}},
		{Method: "GET", Path: "/api/tokens"},
		{Method: "DELETE", Path: "/api/tokens/" + id},
		{Method: "PATCH", Path: "/api/directory/A", Body: map[string]any{"category": "x"}},
	} {
		expect(t, asToken(t, h, secret, r), 403, map[string]any{"error": "forbidden"})
	}
	for _, c := range []struct {
		spec map[string]any
		msg  string
	}{
		{map[string]any{"name": "no scope"}, "needs a scope"},
		{map[string]any{"keys": []string{"A"}, "risk_ceiling": "medium"}, "low or high"},
		{map[string]any{"keys": []string{"A"}, "pin": []string{"NOPE"}}, "no such row"},
		{map[string]any{"keys": []string{"A"}, "pins": map[string]string{"A": "abc"}}, "64 hex"},
		{map[string]any{"categories": []string{"other"}, "pin": []string{"A"}}, "outside the token's scope"},
		{map[string]any{"keys": []string{"A"}, "colour": "red"}, "colour"},
		{map[string]any{"keys": []string{"A"}, "expires_at": "tomorrow"}, "RFC 3339"},
	} {
		got := h.do(t, req{Method: "POST", Path: "/api/tokens", Body: c.spec})
		expect(t, got, 400, map[string]any{"error": "invalid_request"})
		if !strings.Contains(string(got.Raw), c.msg) {
			t.Errorf("%v: %s", c.spec, got.Raw)
		}
	}
	// Revoked: reads refused, calls refused with the literal reason.
	expect(t, asToken(t, h, secret, req{Method: "GET", Path: "/api/directory/A"}), 200, nil)
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/tokens/" + id}), 200, map[string]any{"ok": true, "id": id})
	expect(t, asToken(t, h, secret, req{Method: "GET", Path: "/api/directory/A"}), 401, map[string]any{"error": "unauthorized"})
	refused(t, h, tokenCall(t, h, secret, "A", ""), 401, "token_revoked:"+id)
	expect(t, asToken(t, h, "rct_not-a-real-token", req{Method: "GET", Path: "/api/directory"}), 401, map[string]any{"error": "unauthorized"})
}

// Every gate step: its refusal, with the literal reason and status, and its pass.
func TestGateSteps(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback)
	createRow(t, h, temperatureRow(up.URL))
	createRow(t, h, map[string]any{"key": "OWNER_POWER", "type": "http", "target": "GET " + h.URL + "/api/directory", "auth": "bearer:ROWCALL_OWNER_KEY", "category": "tools"})
	createRow(t, h, map[string]any{"key": "RISKY", "type": "http", "category": "tools", "sensitive": 1,
		"target": "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2", "input_schema": `{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"}}}`})
	const body = "37.77|-122.42"
	calls := func() int { return len(up.requests()) }

	t.Run("expiry", func(t *testing.T) {
		old, _, _ := mint(t, h, map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}, "expires_at": "2020-01-01T00:00:00Z"})
		refused(t, h, tokenCall(t, h, old, "ZZ_TEST_TEMPERATURE", body), 401, "token_expired:2020-01-01T00:00:00.000Z")
		fresh, _, _ := mint(t, h, map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}, "expires_in": 60})
		expect(t, tokenCall(t, h, fresh, "ZZ_TEST_TEMPERATURE", body), 200, map[string]any{"ok": true})
	})
	t.Run("audience", func(t *testing.T) {
		other, _, _ := mint(t, h, map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}, "audience": "staging"})
		n := calls()
		refused(t, h, tokenCall(t, h, other, "ZZ_TEST_TEMPERATURE", body), 403, "audience_mismatch:staging!=rowcall")
		if calls() != n {
			t.Fatal("refused call reached the upstream")
		}
		mine, _, _ := mint(t, h, map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}, "audience": "rowcall"})
		expect(t, tokenCall(t, h, mine, "ZZ_TEST_TEMPERATURE", body), 200, map[string]any{"ok": true})
	})
	t.Run("scope", func(t *testing.T) {
		tok, _, _ := mint(t, h, map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}})
		// A row outside the scope does not exist for the token.
		expect(t, tokenCall(t, h, tok, "RISKY", body), 404, map[string]any{"error": "unknown_key", "did_you_mean": []string{}})
		expect(t, asToken(t, h, tok, req{Method: "GET", Path: "/api/directory/RISKY"}), 404, nil)
		got := asToken(t, h, tok, req{Method: "GET", Path: "/api/directory"})
		expect(t, got, 200, map[string]any{"total": 1})
		cat, _, _ := mint(t, h, map[string]any{"categories": []string{"tools"}})
		expect(t, asToken(t, h, cat, req{Method: "GET", Path: "/api/directory"}), 200, map[string]any{"total": 3})
	})
	t.Run("owner gate", func(t *testing.T) {
		tok, _, _ := mint(t, h, map[string]any{"keys": []string{"OWNER_POWER"}, "risk_ceiling": "high"})
		refused(t, h, tokenCall(t, h, tok, "OWNER_POWER", ""), 403, "owner_only:OWNER_POWER")
		expect(t, dispatchCall(t, h, "OWNER_POWER", ""), 200, map[string]any{"ok": true})
	})
	t.Run("risk ceiling", func(t *testing.T) {
		low, _, _ := mint(t, h, map[string]any{"keys": []string{"RISKY"}})
		n := calls()
		refused(t, h, tokenCall(t, h, low, "RISKY", body), 403, "risk_ceiling:low<row:high")
		if calls() != n {
			t.Fatal("refused call reached the upstream")
		}
		high, _, _ := mint(t, h, map[string]any{"keys": []string{"RISKY"}, "risk_ceiling": "high"})
		expect(t, tokenCall(t, h, high, "RISKY", body), 200, map[string]any{"ok": true})
	})
	t.Run("fixed body", func(t *testing.T) {
		tok, _, _ := mint(t, h, map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}, "fixed_body": body})
		refused(t, h, tokenCall(t, h, tok, "ZZ_TEST_TEMPERATURE", "51.51|-0.13"), 403, "fixed_body:mismatch")
		expect(t, tokenCall(t, h, tok, "ZZ_TEST_TEMPERATURE", body), 200, map[string]any{"ok": true})
	})
	t.Run("payload ceiling", func(t *testing.T) {
		tok, _, _ := mint(t, h, map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}, "max_payload": 13})
		refused(t, h, tokenCall(t, h, tok, "ZZ_TEST_TEMPERATURE", "37.771|-122.42"), 413, "payload_ceiling:14>13")
		expect(t, tokenCall(t, h, tok, "ZZ_TEST_TEMPERATURE", body), 200, map[string]any{"ok": true})
	})
	t.Run("nested calls are gated and scoped", func(t *testing.T) {
		createRow(t, h, map[string]any{"key": "WRAPPER", "type": "flow", "content": "# WHAT: wraps\nZZ_TEST_TEMPERATURE: $1|$2"})
		tok, _, _ := mint(t, h, map[string]any{"keys": []string{"WRAPPER", "ZZ_TEST_TEMPERATURE"}})
		expect(t, tokenCall(t, h, tok, "WRAPPER", body), 200, map[string]any{"ok": true})
		// Editing the flow to reach a row outside the token's scope does not widen it.
		expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/WRAPPER", Body: map[string]any{"content": "# WHAT: wraps\nRISKY: $1|$2"}}), 200, nil)
		n := calls()
		expect(t, tokenCall(t, h, tok, "WRAPPER", body), 200, map[string]any{"ok": false, "result": "ERR:unknown_key:RISKY"})
		if calls() != n {
			t.Fatal("out-of-scope step reached the upstream")
		}
	})
}

// The seed's pinning scenario: an examples edit keeps the call running, a
// target edit stops it with 409 contract_changed.
func TestContractPinning(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback)
	createRow(t, h, temperatureRow(up.URL))
	tok, _, scope := mint(t, h, map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}, "pin": []string{"ZZ_TEST_TEMPERATURE"}})
	pinned := scope["pins"].(map[string]any)["ZZ_TEST_TEMPERATURE"].(string)
	got := tokenCall(t, h, tok, "ZZ_TEST_TEMPERATURE", "37.77|-122.42")
	expect(t, got, 200, map[string]any{"ok": true})
	if c := proof(t, got)["contract_sha256"]; c != pinned {
		t.Fatalf("receipt contract %v, pinned %s", c, pinned)
	}

	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/ZZ_TEST_TEMPERATURE", Body: map[string]any{"examples": `["51.51|-0.13"]`}}), 200, nil)
	expect(t, tokenCall(t, h, tok, "ZZ_TEST_TEMPERATURE", "51.51|-0.13"), 200, map[string]any{"ok": true})

	// The description is part of the contract: a pinned token stops at a new # WHAT.
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/ZZ_TEST_TEMPERATURE",
		Body: map[string]any{"content": "# WHAT: Deletes everything (it says now).\n# ARGS: $1 | $2"}}), 200, nil)
	current := proof(t, dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "1|2"))["contract_sha256"].(string)
	n := len(up.requests())
	refused(t, h, tokenCall(t, h, tok, "ZZ_TEST_TEMPERATURE", "37.77|-122.42"), 409, "contract_changed:"+pinned+"!="+current)
	if len(up.requests()) != n {
		t.Fatal("the refused call reached the upstream")
	}
}

// A row with input_schema refuses a malformed call before anything runs.
func TestTypedCalls(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback)
	row := temperatureRow(up.URL)
	row["input_schema"] = `{"type":"object","properties":{"latitude":{"type":"number","minimum":-90,"maximum":90},"longitude":{"type":"number","minimum":-180,"maximum":180}},"required":["latitude","longitude"]}`
	createRow(t, h, row)
	for _, bad := range []struct{ body, where string }{{"north|-122.42", "/latitude"}, {"91|0", "/latitude"}, {"37.77", "longitude"}} {
		got := dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", bad.body)
		expect(t, got, 400, map[string]any{"error": "invalid_arguments", "ran": false})
		if msg := got.JSON["message"].(string); !strings.Contains(msg, bad.where) {
			t.Fatalf("%q: message %q", bad.body, msg)
		}
	}
	if n := len(up.requests()); n != 0 {
		t.Fatalf("malformed calls reached the upstream %d times", n)
	}
	expect(t, dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "37.77|-122.42"), 200, map[string]any{"ok": true})
	// A schema that is not valid JSON Schema is refused when written.
	got := h.do(t, req{Method: "PATCH", Path: "/api/directory/ZZ_TEST_TEMPERATURE", Body: map[string]any{"input_schema": `{"type":"objekt"}`}})
	expect(t, got, 400, map[string]any{"field": "input_schema"})
}

// Receipts are signed and chained; verification offline passes on the real
// chain and names the first bad link after one is altered or removed.
func TestSignedReceiptChain(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback)
	createRow(t, h, temperatureRow(up.URL))
	createRow(t, h, map[string]any{"key": "TWICE", "type": "flow", "content": "# WHAT: two\nZZ_TEST_TEMPERATURE: 1|2\n> ZZ_TEST_TEMPERATURE: 3|4"})
	for range 3 {
		dispatchCall(t, h, "TWICE", "")
	}
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	chain := filepath.Join(dir, "chain.json")
	save := func(path string, args ...string) { t.Helper(); saveCLI(t, h, path, args...) }
	verify := func(file string) (string, error) { return verifyCLI(file, "--keys", keys) }
	save(keys, "receipt", "keys")
	save(chain, "receipt", "export")
	if out, err := verify(chain); err != nil || !strings.Contains(out, "OK: 9 receipts, seq 1 to 9") {
		t.Fatalf("good chain: %v %s", err, out)
	}
	one := filepath.Join(dir, "one.json")
	got := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + proof(t, dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "1|2"))["invocation_id"].(string)})
	os.WriteFile(one, got.Raw, 0o600)
	if out, err := verify(one); err != nil || !strings.Contains(out, "OK: receipt") {
		t.Fatalf("one receipt: %v %s", err, out)
	}

	db := h.db(t)
	if _, err := db.Exec(`UPDATE receipts SET outcome = 'ok', output_sha256 = 'forged' WHERE seq = 3`); err != nil {
		t.Fatal(err)
	}
	save(chain, "receipt", "export")
	if out, err := verify(chain); err == nil || !strings.Contains(out, "receipt seq 3 ") || !strings.Contains(out, "altered") {
		t.Fatalf("altered chain: %v %s", err, out)
	}
	if _, err := db.Exec(`DELETE FROM receipts WHERE seq IN (3, 6)`); err != nil {
		t.Fatal(err)
	}
	save(chain, "receipt", "export")
	if out, err := verify(chain); err == nil || !strings.Contains(out, "receipt seq 4 ") || !strings.Contains(out, "jumps from seq 2 to 4") {
		t.Fatalf("chain with a hole: %v %s", err, out)
	}
	// The public key is at the well-known URL, keyless.
	expect(t, h.do(t, req{Method: "GET", Path: "/.well-known/rowcall-receipt-keys", NoAuth: true}), 200, nil)
}

// saveCLI runs the rowcall command args against h and saves what it prints.
func saveCLI(t *testing.T, h *host, path string, args ...string) {
	t.Helper()
	out, err := exec.Command(binary, append(args, "--url", h.URL, "--data", h.Data)...).Output()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	os.WriteFile(path, out, 0o600)
}

// verifyCLI runs `rowcall receipt verify FILE args…` offline.
func verifyCLI(file string, args ...string) (string, error) {
	out, err := exec.Command(binary, append([]string{"receipt", "verify", file}, args...)...).CombinedOutput()
	return string(out), err
}

// A checkpoint saved from the host makes a truncated chain visible: deleting
// the newest receipts leaves a chain that verifies by itself, but not against
// the checkpoint; a host restarted on the cut chain writes new receipts at
// the deleted seqs, a fork the checkpoint catches too. A chain that only grew
// since agrees with it.
func TestReceiptCheckpoint(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback)
	createRow(t, h, temperatureRow(up.URL))
	call := func(n int) {
		for range n {
			dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "1|2")
		}
	}
	call(5)
	dir := t.TempDir()
	keys, cp, chain := filepath.Join(dir, "keys.json"), filepath.Join(dir, "checkpoint.txt"), filepath.Join(dir, "chain.json")
	saveCLI(t, h, keys, "receipt", "keys")
	saveCLI(t, h, cp, "receipt", "checkpoint")
	if b, _ := os.ReadFile(cp); !strings.HasPrefix(string(b), "rowcall/receipts\n5\n") || !strings.Contains(string(b), "\n\n\u2014 rowcall/receipts ") {
		t.Fatalf("checkpoint:\n%s", b)
	}
	fetched := h.do(t, req{Method: "GET", Path: "/.well-known/rowcall-checkpoint", NoAuth: true})
	expect(t, fetched, 200, nil)
	if b, _ := os.ReadFile(cp); !strings.HasPrefix(string(fetched.Raw), strings.SplitN(string(b), "\n\n", 2)[0]) {
		t.Fatalf("the well-known checkpoint %q is not the saved one %q", fetched.Raw, b)
	}
	verify := func() (string, error) { return verifyCLI(chain, "--keys", keys, "--checkpoint", cp) }

	call(2)
	saveCLI(t, h, chain, "receipt", "export")
	out, err := verify()
	if err != nil || !strings.Contains(out, "OK: 7 receipts, seq 1 to 7") || !strings.Contains(out, "agrees with the export's own checkpoint (rowcall/receipts, seq 7)") ||
		!strings.Contains(out, "agrees with checkpoint "+cp+" (rowcall/receipts, seq 5)") {
		t.Fatalf("a chain that grew since the checkpoint: %v\n%s", err, out)
	}

	// Truncated: the newest three receipts (seq 5, 6, 7) deleted.
	if _, err := h.db(t).Exec(`DELETE FROM receipts WHERE seq >= 5`); err != nil {
		t.Fatal(err)
	}
	saveCLI(t, h, chain, "receipt", "export")
	if out, err := verifyCLI(chain, "--keys", keys); err != nil || !strings.Contains(out, "OK: 4 receipts") {
		t.Fatalf("without the saved checkpoint the cut chain should still verify (that is the hole this closes): %v\n%s", err, out)
	}
	if out, err := verify(); err == nil || !strings.Contains(out, "FAILED: checkpoint "+cp+": the chain ends at seq 4, but the checkpoint was signed at seq 5") ||
		!strings.Contains(out, "truncated") {
		t.Fatalf("truncated chain against the saved checkpoint: %v\n%s", err, out)
	}
	// The checkpoint can also come from an earlier export.
	old := filepath.Join(dir, "old.json")
	os.WriteFile(old, []byte(`{"checkpoint":`+jsonString(string(fetched.Raw))+`,"receipts":[]}`), 0o600)
	if out, err := verifyCLI(chain, "--keys", keys, "--checkpoint", old); err == nil || !strings.Contains(out, "truncated") {
		t.Fatalf("truncated chain against an earlier export: %v\n%s", err, out)
	}

	// Forked: restarted on the cut chain, the host signs new receipts at seq 5…
	h.stop()
	h = startHostIn(t, h.Data, allowLoopback)
	call(2)
	saveCLI(t, h, chain, "receipt", "export")
	if out, err := verifyCLI(chain, "--keys", keys); err != nil || !strings.Contains(out, "OK: 6 receipts") {
		t.Fatalf("the rewritten chain verifies by itself: %v\n%s", err, out)
	}
	if out, err := verify(); err == nil || !strings.Contains(out, "FAILED: checkpoint "+cp+": receipt seq 5 ") || !strings.Contains(out, "forks from the checkpoint") {
		t.Fatalf("forked chain against the saved checkpoint: %v\n%s", err, out)
	}
	// A checkpoint edited by hand no longer verifies.
	b, _ := os.ReadFile(cp)
	os.WriteFile(cp, []byte(strings.Replace(string(b), "\n5\n", "\n4\n", 1)), 0o600)
	if out, err := verify(); err == nil || !strings.Contains(out, "the checkpoint's signature does not verify") {
		t.Fatalf("edited checkpoint: %v\n%s", err, out)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Owner key rotation without downtime: both keys work during the window, the
// old one stops after it.
func TestOwnerKeyRotation(t *testing.T) {
	h := startHost(t, nil)
	old := h.Key
	// The window is whole seconds (the file keeps its end in RFC 3339): 8 s
	// leaves a busy machine time to pick up the new key inside it.
	rotated := time.Now()
	out, err := exec.Command(binary, "key", "rotate", "--data", h.Data, "--window", "8s").CombinedOutput()
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	b, _ := os.ReadFile(filepath.Join(h.Data, "owner.key"))
	fresh := strings.TrimSpace(string(b))
	if fresh == old {
		t.Fatal("rotate kept the key")
	}
	works := func(key string) bool {
		r := h.do(t, req{Method: "GET", Path: "/api/directory", NoAuth: true, Header: map[string]string{"x-terminal-key": key}})
		return r.Status == http.StatusOK
	}
	deadline := rotated.Add(5 * time.Second) // the host looks at the key files at most once a second
	for !works(fresh) {
		if time.Now().After(deadline) {
			t.Fatal("the running host never accepted the new key")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !works(old) {
		t.Fatal("the previous key stopped working inside the rotation window")
	}
	deadline = rotated.Add(8*time.Second + 5*time.Second)
	for works(old) {
		if time.Now().After(deadline) {
			t.Fatal("the previous key still works after its window")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !works(fresh) {
		t.Fatal("the new key stopped working")
	}
	_ = fmt.Sprint
}
