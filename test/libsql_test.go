package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sqldExpiry is a little more than sqld's Hrana stream expiry (about 10 s: a
// stream used again after 10 s works, after 11 s it is refused).
const sqldExpiry = 12 * time.Second

// A host on libSQL answers every call after its connections' streams expired
// while it idled, and after sqld restarted under it (which also drops every
// TCP connection); the chain it wrote throughout verifies offline with each
// acknowledged receipt in it exactly once.
func TestSqldHostSurvivesIdleAndRestart(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dbPath := filepath.Join(t.TempDir(), "db.sqld")
	sqld := startSqldAt(t, addr, dbPath)
	h := startHost(t, []string{"--db", "http://" + addr, "--no-examples=false"})

	var acked []string
	call := func(when string) {
		t.Helper()
		r := dispatchCall(t, h, "ECHO", when)
		if r.Status != 200 || r.JSON["result"] != when {
			t.Fatalf("%s: HTTP %d %s\nhost log:\n%s", when, r.Status, r.Raw, h.out.String())
		}
		acked = append(acked, proof(t, r)["invocation_id"].(string))
		shape := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "ECHO", "body": when, "shape": true}})
		if shape.Status != 200 {
			t.Fatalf("%s, shape mode: HTTP %d %s\nhost log:\n%s", when, shape.Status, shape.Raw, h.out.String())
		}
	}
	call("fresh")
	call("warm")
	time.Sleep(sqldExpiry) // every stream the host holds expires
	for i := range 3 {
		call(fmt.Sprint("after idle ", i))
	}

	// Restart sqld on the same address and database: the host's streams and
	// TCP connections are gone, its batons unknown to the new server.
	syscall.Kill(-sqld.cmd.Process.Pid, syscall.SIGKILL)
	sqld.cmd.Wait()
	startSqldAt(t, addr, dbPath)
	for i := range 3 {
		call(fmt.Sprint("after restart ", i))
	}
	time.Sleep(sqldExpiry) // and idle once more on the new server
	call("after restart and idle")

	chain := verifyChain(t, h)
	seen := map[string]int{}
	for _, rc := range chain {
		seen[rc.ID]++
	}
	for _, id := range acked {
		if seen[id] != 1 {
			t.Fatalf("acknowledged receipt %s is stored %d times", id, seen[id])
		}
	}
}

// exported is the part of an exported receipt these tests look at.
type exported struct {
	ID    string `json:"invocation_id"`
	Seq   int64  `json:"seq"`
	KeyID string `json:"key_id"`
}

// verifyChain exports the chain from the first host, saves every host's
// public keys in one keys file, checks the chain with `rowcall receipt
// verify` and returns it. It fails unless seq runs 1, 2, … with no gap.
func verifyChain(t *testing.T, hosts ...*host) []exported {
	t.Helper()
	dir := t.TempDir()
	var keys []json.RawMessage
	for _, h := range hosts {
		out, err := exec.Command(binary, "receipt", "keys", "--url", h.URL, "--data", h.Data).Output()
		if err != nil {
			t.Fatalf("receipt keys: %v", err)
		}
		var k struct{ Keys []json.RawMessage }
		if err := json.Unmarshal(out, &k); err != nil {
			t.Fatalf("receipt keys: %v %s", err, out)
		}
		keys = append(keys, k.Keys...)
	}
	kj, _ := json.Marshal(map[string]any{"keys": keys})
	os.WriteFile(filepath.Join(dir, "keys.json"), kj, 0o600)
	out, err := exec.Command(binary, "receipt", "export", "--url", hosts[0].URL, "--data", hosts[0].Data).Output()
	if err != nil {
		t.Fatalf("receipt export: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "chain.json"), out, 0o600)
	var chain struct{ Receipts []exported }
	if err := json.Unmarshal(out, &chain); err != nil {
		t.Fatal(err)
	}
	for i, rc := range chain.Receipts {
		if rc.Seq != int64(i+1) {
			t.Fatalf("receipt %d of the chain has seq %d", i+1, rc.Seq)
		}
	}
	res, err := exec.Command(binary, "receipt", "verify", filepath.Join(dir, "chain.json"), "--keys", filepath.Join(dir, "keys.json")).CombinedOutput()
	if err != nil || !strings.Contains(string(res), "OK:") {
		t.Fatalf("receipt verify: %v %s", err, res)
	}
	t.Log(strings.TrimSpace(string(res)))
	return chain.Receipts
}
