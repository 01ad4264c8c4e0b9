package test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// A kill -9 of the host under load loses no receipt that was acknowledged to a
// caller: every invocation id a caller got back is in the database after a
// restart, and the chain still verifies.
func TestKillNineLosesNoAcknowledgedReceipt(t *testing.T) {
	h := startHost(t, nil)
	echo, _ := wasmexamples.ByName("echo")
	expect(t, putModule(t, h, "echo", echo.Wasm), 200, nil)
	createRow(t, h, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": echo.Content})

	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]string{"key": "ECHO", "body": "crash"})
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("POST", h.URL+"/api/dispatch", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("x-terminal-key", h.Key)
				res, err := client.Do(req)
				if err != nil {
					return // the host is gone
				}
				var out struct {
					OK    bool `json:"ok"`
					Proof struct {
						ID string `json:"invocation_id"`
					} `json:"proof"`
				}
				err = json.NewDecoder(res.Body).Decode(&out)
				res.Body.Close()
				if err == nil && res.StatusCode == 200 && out.OK && out.Proof.ID != "" {
					mu.Lock()
					acked = append(acked, out.Proof.ID)
					mu.Unlock()
				}
			}
		}()
	}
	// Killed once 200 calls were acknowledged, with 32 more under way.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 200 || time.Now().After(deadline) {
			break
		}
	}
	h.cmd.Process.Kill() // SIGKILL: no shutdown, no flush
	h.cmd.Wait()
	close(stop)
	wg.Wait()
	if len(acked) < 100 {
		t.Fatalf("only %d calls acknowledged before the kill", len(acked))
	}

	h2 := startHostIn(t, h.Data, nil)
	db := h2.db(t)
	missing := 0
	for _, id := range acked {
		var n int
		db.QueryRow(`SELECT COUNT(*) FROM receipts WHERE id = ?`, id).Scan(&n)
		if n != 1 {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged receipts lost by kill -9", missing, len(acked))
	}
	// The chain written under load and cut by the kill still verifies.
	dir := t.TempDir()
	for name, args := range map[string][]string{"keys.json": {"receipt", "keys"}, "chain.json": {"receipt", "export"}} {
		out, err := exec.Command(binary, append(args, "--url", h2.URL, "--data", h2.Data)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), out, 0o600)
	}
	out, err := exec.Command(binary, "receipt", "verify", filepath.Join(dir, "chain.json"), "--keys", filepath.Join(dir, "keys.json")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK:") {
		t.Fatalf("chain after kill -9: %v %s", err, out)
	}
	t.Logf("%d acknowledged before kill -9, all stored; %s", len(acked), strings.TrimSpace(string(out)))
	// And the host answers as before.
	expect(t, dispatchCall(t, h2, "ECHO", "after"), 200, map[string]any{"result": "after"})
}
