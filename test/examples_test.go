package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A new host comes with example rows a newcomer can call offline: they reach
// this host's own API (as $SELF, served in-process), and nothing else on
// loopback is reachable without the operator's allow-list.
func TestExampleRowsWorkOffline(t *testing.T) {
	h := startHost(t, []string{"--no-examples=false"})
	got := dispatchCall(t, h, "DIR_GET", "DIR_PATCH")
	expect(t, got, 200, map[string]any{"ok": true})
	if r := got.JSON["result"].(string); !strings.HasPrefix(r, `HTTP 200:{"key":"DIR_PATCH"`) {
		t.Fatalf("DIR_GET: %q", r)
	}
	id := proof(t, got)["invocation_id"].(string)

	// The host wrote the examples; DIR_PATCH edits a row as the owner key
	// it sends, a bearer token.
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/DIR_LIST"}), 200, map[string]any{"written_by": "rowcall:examples"})
	expect(t, dispatchCall(t, h, "DIR_PATCH", `DIR_LIST|{"planner_rank":50,"examples":"[\"a|b\"]"}`), 200, map[string]any{"ok": true})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/DIR_LIST"}), 200, map[string]any{"planner_rank": 50, "examples": `["a|b"]`,
		"written_by": "owner:bearer"})

	got = dispatchCall(t, h, "ROW_DOSSIER", "DIR_LIST")
	expect(t, got, 200, map[string]any{"ok": true})
	if r := got.JSON["result"].(string); !strings.HasPrefix(r, `{"ROW":"HTTP 200:`) || !strings.Contains(r, `"HISTORY":"HTTP 200:`) {
		t.Fatalf("ROW_DOSSIER: %q", r)
	}
	got = dispatchCall(t, h, "RECEIPT_CONFIRM", id)
	if r := got.JSON["result"].(string); !strings.Contains(r, `"confirmed":true`) || !strings.Contains(r, "PROVEN_MATERIAL_RESULT") {
		t.Fatalf("RECEIPT_CONFIRM: %q", r)
	}

	// The built-in fn modules are registered with their rows.
	got = dispatchCall(t, h, "NOW", "")
	if r := got.JSON["result"].(string); !strings.Contains(r, `"zone":"P`) {
		t.Fatalf("NOW: %q", r)
	}
	expect(t, dispatchCall(t, h, "UPPER", "rowcall"), 200, map[string]any{"result": "ROWCALL"})

	// Another loopback service is refused by the outbound policy.
	up := newUpstream(t, openMeteo)
	createRow(t, h, map[string]any{"key": "LOCAL_SERVICE", "type": "http", "target": "GET " + up.URL + "/v1/forecast?latitude=1&longitude=2"})
	got = dispatchCall(t, h, "LOCAL_SERVICE", "")
	if r := got.JSON["result"].(string); !strings.HasPrefix(r, "ERR:http:fetch:outbound: 127.0.0.1:") || !strings.Contains(r, "loopback") {
		t.Fatalf("loopback upstream: %q", r)
	}
	if len(up.requests()) != 0 {
		t.Fatal("the refused upstream was reached")
	}
	// A restart does not reinstall deleted examples.
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/DIR_HISTORY"}), 200, nil)
	h.stop()
	h2 := startHostIn(t, h.Data, []string{"--no-examples=false"})
	expect(t, h2.do(t, req{Method: "GET", Path: "/api/directory/DIR_HISTORY"}), 404, nil)
}

// The example rows call their own host as $SELF: exported from one host and
// imported into another, they call the other. A host whose public URL does not
// resolve at all still serves them, in-process.
func TestExampleRowsArePortable(t *testing.T) {
	a := startHost(t, []string{"--no-examples=false"})
	out, err := exec.Command(binary, "export", "--url", a.URL, "--data", a.Data).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"GET $SELF/api/directory/$1"`) {
		t.Fatalf("the export does not carry $SELF: %.400s", out)
	}
	a.stop()
	file := filepath.Join(t.TempDir(), "registry.json")
	os.WriteFile(file, out, 0o600)
	for _, extra := range [][]string{nil, {"--public-url", "https://rowcall.invalid/"}} {
		b := startHost(t, extra)
		if out, err := exec.Command(binary, "import", file, "--url", b.URL, "--data", b.Data).CombinedOutput(); err != nil {
			t.Fatalf("import: %v %s", err, out)
		}
		createRow(t, b, map[string]any{"key": "ONLY_ON_B", "type": "flow", "content": "# WHAT: exists on b only\nDIR_LIST: x"})
		got := dispatchCall(t, b, "DIR_GET", "ONLY_ON_B")
		if r, _ := got.JSON["result"].(string); !strings.HasPrefix(r, `HTTP 200:{"key":"ONLY_ON_B"`) {
			t.Fatalf("%v: DIR_GET on the importing host: %s", extra, got.Raw)
		}
		got = dispatchCall(t, b, "ROW_DOSSIER", "ONLY_ON_B")
		if r, _ := got.JSON["result"].(string); !strings.HasPrefix(r, `{"ROW":"HTTP 200:{\"key\":\"ONLY_ON_B\"`) || !strings.Contains(r, `"HISTORY":"HTTP 200:`) {
			t.Fatalf("%v: ROW_DOSSIER on the importing host: %s", extra, got.Raw)
		}
		b.stop()
	}
}

// A fresh host of every kind offers the example rows and modules on its first
// calls: the local host on SQLite or sqld installs them when it creates the
// database, the worker on its first request (worker/seed.go). The worker's
// http examples call its own API in-process, as $SELF. Seeding is once per
// database: a fresh Go instance (after a crash) installs nothing again and
// does not bring back a deleted example.
func TestFreshHostsOfferTheExamples(t *testing.T) {
	on := append([]string{"--no-examples=false"}, allowLoopback...)
	starts := []struct {
		name  string
		start func(t *testing.T) *target
	}{
		{"embedded", func(t *testing.T) *target {
			h := startHost(t, on)
			return &target{host: h, Name: "embedded", DB: h.db}
		}},
		{"sqld", func(t *testing.T) *target {
			url := startSqld(t)
			h := startHost(t, append(append([]string{}, on...), "--db", url))
			return &target{host: h, Name: "sqld"}
		}},
		{"worker", func(t *testing.T) *target {
			// No loopback allowed: the examples' calls of the worker's own API
			// ($SELF, the request's origin http://127.0.0.1:…) must be served
			// in-process, not fetched.
			return startWorker(t, []string{"ROWCALL_NO_EXAMPLES=0", "ROWCALL_WORKER_DEBUG=1", "ROWCALL_ALLOW_OUTBOUND=rowcall.invalid"})
		}},
	}
	for _, s := range starts {
		t.Run(s.name, func(t *testing.T) {
			tg := s.start(t)
			h := tg.host
			if r := dispatchCall(t, h, "NOW", "").JSON["result"].(string); !strings.Contains(r, `"zone":"P`) {
				t.Fatalf("NOW: %q", r)
			}
			expect(t, dispatchCall(t, h, "UPPER", "rowcall"), 200, map[string]any{"ok": true, "result": "ROWCALL"})
			expect(t, dispatchCall(t, h, "ECHO", "hello|world"), 200, map[string]any{"ok": true, "result": "hello|world"})
			got := dispatchCall(t, h, "ROW_DOSSIER", "NOW")
			if r, _ := got.JSON["result"].(string); !strings.HasPrefix(r, `{"ROW":"HTTP 200:{\"key\":\"NOW\"`) || !strings.Contains(r, `"HISTORY":"HTTP 200:{\"key\":\"NOW\"`) {
				t.Fatalf("ROW_DOSSIER: %s", got.Raw)
			}
			got = dispatchCall(t, h, "DIR_GET", "UPPER")
			if r, _ := got.JSON["result"].(string); !strings.HasPrefix(r, `HTTP 200:{"key":"UPPER"`) {
				t.Fatalf("DIR_GET: %s", got.Raw)
			}
			if tg.Name != "worker" {
				return
			}
			var seeded struct {
				Examples struct {
					Done      bool     `json:"done"`
					Installed []string `json:"installed"`
					MS        float64  `json:"ms"`
				} `json:"examples"`
			}
			json.Unmarshal(h.do(t, req{Method: "GET", Path: "/_worker/stats"}).Raw, &seeded)
			if e := seeded.Examples; !e.Done || !slices.Contains(e.Installed, "NOW") {
				t.Fatalf("GET /_worker/stats: examples %+v", e)
			}
			t.Logf("the worker's first request installed %d example rows in %.0f ms", len(seeded.Examples.Installed), seeded.Examples.MS)
			up := newUpstream(t, openMeteo)
			createRow(t, h, map[string]any{"key": "LOCAL_SERVICE", "type": "http", "target": "GET " + up.URL + "/v1/forecast"})
			if r := dispatchCall(t, h, "LOCAL_SERVICE", "").JSON["result"].(string); !strings.HasPrefix(r, "ERR:http:fetch:outbound:") {
				t.Fatalf("another loopback service: %q (want it refused, so the examples above ran in-process)", r)
			}
			total := func() any {
				return h.do(t, req{Method: "GET", Path: "/api/directory?limit=1"}).JSON["total"]
			}
			before := total()
			expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/DIR_HISTORY"}), 200, nil)
			expect(t, h.do(t, req{Method: "POST", Path: "/_worker/crash"}), 503, nil)
			expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/DIR_HISTORY"}), 404, nil)
			if after := total(); fmt.Sprint(after) != fmt.Sprint(before.(float64)-1) {
				t.Fatalf("rows after the restart: %v, before the delete %v", after, before)
			}
			json.Unmarshal(h.do(t, req{Method: "GET", Path: "/_worker/stats"}).Raw, &seeded)
			if e := seeded.Examples; !e.Done || len(e.Installed) != 0 {
				t.Fatalf("the fresh instance installed examples again: %+v", e)
			}
			expect(t, dispatchCall(t, h, "UPPER", "again"), 200, map[string]any{"ok": true, "result": "AGAIN"})
		})
	}
}
