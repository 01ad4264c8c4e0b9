package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	sqld.wait()
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
	// The CLI reads a host's key from its data directory, or (a worker has
	// none here) from ROWCALL_OWNER_KEY.
	cli := func(h *host, args ...string) ([]byte, error) {
		args = append(args, "--url", h.URL)
		if h.Data != "" {
			args = append(args, "--data", h.Data)
		}
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY="+h.Key)
		return cmd.Output()
	}
	var keys []json.RawMessage
	for _, h := range hosts {
		out, err := cli(h, "receipt", "keys")
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
	out, err := cli(hosts[0], "receipt", "export")
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

// soakFor is how long TestSqldTwoHostsSoak runs: 20 s, or $ROWCALL_SOAK (a Go
// duration, e.g. ROWCALL_SOAK=10m) for the long run docs/operating.md gives.
func soakFor(t *testing.T) time.Duration {
	if v := os.Getenv("ROWCALL_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("ROWCALL_SOAK=%s: %v", v, err)
		}
		return d
	}
	return 20 * time.Second
}

// Two hosts on one sqld, for a while: both answer every call, a row edited
// through one is live on the other for the next call that starts after the
// edit answered (past the dispatcher's 1 ms event-log freshness), and the two
// write one receipt chain (each group signed by its own host's key) that
// verifies offline with every acknowledged receipt in it exactly once.
func TestSqldTwoHostsSoak(t *testing.T) {
	url := startSqld(t)
	a := startHost(t, []string{"--db", url, "--no-examples=false"})
	b := startHost(t, []string{"--db", url})
	hosts := []*host{a, b}
	createRow(t, a, map[string]any{"key": "SOAK_V", "type": "flow", "content": "# WHAT: says the soak's version\nECHO: v0"})

	call := func(h *host, key, body string) (result, id string, err error) {
		r, err := h.send(req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": key, "body": body}})
		if err != nil {
			return "", "", err
		}
		p, _ := r.JSON["proof"].(map[string]any)
		id, _ = p["invocation_id"].(string)
		result, _ = r.JSON["result"].(string)
		if r.Status != 200 || r.JSON["ok"] != true || id == "" {
			return "", "", fmt.Errorf("HTTP %d %s", r.Status, r.Raw)
		}
		return result, id, nil
	}

	var (
		mu     sync.Mutex
		acked  []string
		failed []string
	)
	note := func(id string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failed = append(failed, err.Error())
		} else {
			acked = append(acked, id)
		}
	}
	deadline := time.Now().Add(soakFor(t))
	var wg sync.WaitGroup
	for _, h := range hosts {
		for range 2 {
			wg.Go(func() {
				for time.Now().Before(deadline) {
					body := fmt.Sprint(time.Now().UnixNano())
					result, id, err := call(h, "ECHO", body)
					if err == nil && result != body {
						err = fmt.Errorf("ECHO %s answered %q", body, result)
					}
					note(id, err)
				}
			})
		}
	}
	edits := 0
	wg.Go(func() {
		for i := 1; time.Now().Before(deadline); i++ {
			from, to := hosts[i%2], hosts[(i+1)%2]
			want := fmt.Sprint("v", i)
			r, err := from.send(req{Method: "PATCH", Path: "/api/directory/SOAK_V", Body: map[string]any{"content": "# WHAT: says the soak's version\nECHO: " + want}})
			if err == nil && r.Status != 200 {
				err = fmt.Errorf("PATCH: HTTP %d %s", r.Status, r.Raw)
			}
			if err != nil {
				note("", err)
				continue
			}
			time.Sleep(2 * time.Millisecond) // past the other host's 1 ms freshness
			result, id, err := call(to, "SOAK_V", "")
			if err == nil && result != want {
				err = fmt.Errorf("edit %d made through one host: the other answered %q, want %q", i, result, want)
			}
			note(id, err)
			edits++
			time.Sleep(200 * time.Millisecond)
		}
	})
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d of %d calls failed; the first: %s\nhost A:\n%s\nhost B:\n%s", len(failed), len(failed)+len(acked), failed[0], a.out.String(), b.out.String())
	}
	chain := verifyChain(t, a, b)
	seen, signers := map[string]int{}, map[string]bool{}
	for _, rc := range chain {
		seen[rc.ID]++
		signers[rc.KeyID] = true
	}
	for _, id := range acked {
		if seen[id] != 1 {
			t.Fatalf("acknowledged receipt %s is stored %d times", id, seen[id])
		}
	}
	if len(signers) != 2 {
		t.Fatalf("the chain is signed by %d keys, want both hosts'", len(signers))
	}
	t.Logf("%d calls acknowledged on two hosts (%d edits seen across), %d receipts in one chain", len(acked), edits, len(chain))
}
