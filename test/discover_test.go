package test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/rowgen"
)

// importRows loads rows through the import API in batches.
func importRows(t testing.TB, h *host, rows []rowcall.Row) {
	t.Helper()
	for start := 0; start < len(rows); start += 1000 {
		batch := rows[start:min(start+1000, len(rows))]
		got := h.do(t, req{Method: "POST", Path: "/api/import", Body: map[string]any{"rows": batch}})
		// wrangler dev restarts workerd now and then on a loaded machine and
		// answers this for the request in flight (it retries only GET and
		// HEAD); an import is idempotent, so it is sent once more.
		if got.Status == 503 && strings.Contains(string(got.Raw), "restarted mid-request") {
			t.Logf("import batch at %d: wrangler restarted the worker mid-request; sending it again", start)
			got = h.do(t, req{Method: "POST", Path: "/api/import", Body: map[string]any{"rows": batch}})
		}
		expect(t, got, 200, map[string]any{"ok": true})
	}
}

func ask(t *testing.T, h *host, words string, auth ...string) []string {
	t.Helper()
	r := req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape(words) + "&limit=5"}
	var got resp
	if len(auth) > 0 {
		got = asToken(t, h, auth[0], r)
	} else {
		got = h.do(t, r)
	}
	expect(t, got, 200, nil)
	var keys []string
	for _, m := range got.JSON["matches"].([]any) {
		keys = append(keys, m.(map[string]any)["key"].(string))
	}
	return keys
}

// Among 10,000 generated rows, ask ranks the intended row first for questions
// written without copying its wording.
func TestAskRanksAmongTenThousand(t *testing.T) {
	h := startHost(t, nil)
	rows := rowgen.Noise(10_000, 7)
	for _, target := range rowgen.Targets() {
		rows = append(rows, target.Row)
	}
	importRows(t, h, rows)
	reg := h.do(t, req{Method: "GET", Path: "/api/dispatch?registry=1"})
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(reg.Raw)
	zw.Close()
	t.Logf("registry document for %d rows: %d bytes, %d gzipped", len(rows), len(reg.Raw), zipped.Len())
	misses := 0
	total := 0
	for _, target := range rowgen.Targets() {
		for _, q := range target.Questions {
			total++
			got := ask(t, h, q)
			if len(got) == 0 || got[0] != target.Row.Key {
				misses++
				t.Errorf("ask %q: got %v, want %s first", q, got, target.Row.Key)
			}
		}
	}
	t.Logf("%d of %d questions ranked their row first", total-misses, total)
}

func TestAskHonoursVisibilityAndScope(t *testing.T) {
	h := startHost(t, nil)
	targets := rowgen.Targets()
	importRows(t, h, []rowcall.Row{targets[0].Row, targets[1].Row, targets[6].Row})
	if got := ask(t, h, "send an sms to a phone"); len(got) == 0 || got[0] != "SMS_DELIVER" {
		t.Fatalf("ask: %v", got)
	}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/SMS_DELIVER", Body: map[string]any{"planner_visible": 0}}), 200, nil)
	for _, k := range ask(t, h, "send an sms to a phone") {
		if k == "SMS_DELIVER" {
			t.Fatal("a planner-hidden row is asked")
		}
	}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/SMS_DELIVER", Body: map[string]any{"planner_visible": 1, "enabled": 0}}), 200, nil)
	for _, k := range ask(t, h, "send an sms to a phone") {
		if k == "SMS_DELIVER" {
			t.Fatal("a disabled row is asked")
		}
	}
	tok, _, _ := mint(t, h, map[string]any{"categories": []string{"time"}})
	if got := ask(t, h, "how hot is it outside at a place", tok); len(got) != 0 {
		t.Fatalf("a time-scoped token asked and got %v", got)
	}
	if got := ask(t, h, "what time is it in california", tok); len(got) != 1 || got[0] != "CLOCK_PACIFIC" {
		t.Fatalf("scoped ask: %v", got)
	}
	// An edit is searchable at once (the index is kept by triggers).
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/CLOCK_PACIFIC", Body: map[string]any{"content": "# WHAT: Moon phase for a date."}}), 200, nil)
	if got := ask(t, h, "lunar phase"); len(got) == 0 || got[0] != "CLOCK_PACIFIC" {
		t.Fatalf("edited row not found: %v", got)
	}
	// did_you_mean draws on the same index, within the token's scope.
	got := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "WEATHER_CURRNT"}})
	expect(t, got, 404, map[string]any{"did_you_mean": []string{"WEATHER_CURRENT"}})
	got = asToken(t, h, tok, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "WEATHER_CURRNT"}})
	expect(t, got, 404, map[string]any{"did_you_mean": []string{}})
}

// The contract document carries every block the seed lists, in at most 2,500
// bytes for a typical row.
func TestContractDocument(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback)
	createRow(t, h, temperatureRow(up.URL))
	createRow(t, h, map[string]any{"key": "ROUTER", "type": "agent", "target": "grok-4.3", "auth": "bearer:GROK_API_KEY", "includes": "BLOCK_VOICE",
		"content": "# WHAT: Routes an inbound message to the right capability.\n# WHEN_TO_USE: a user wrote in and nobody has decided what to do yet.\nYou are a router. End with [REPLY]…[/REPLY]."})
	createRow(t, h, map[string]any{"key": "BLOOIO_FINISH", "type": "flow", "content": "# Phase C of the inbound turn: extract the LAST [REPLY], send it.\n# $1=agent output text. $2=recipient phone.\nLAST_REPLY_OF: $1\n> SEND_BY_CHANNEL: blooio|$2|$PREV"})
	sizes := map[string]int{}
	for _, key := range []string{"ZZ_TEST_TEMPERATURE", "ROUTER", "BLOOIO_FINISH"} {
		got := h.do(t, req{Method: "GET", Path: "/api/dispatch?key=" + key + "&format=markdown"})
		expect(t, got, 200, nil)
		doc := string(got.Raw)
		sizes[key] = len(doc)
		for _, block := range []string{key, "rowcall > ", "**Capability:**", "**When to use:**", "**RUN NOW:** http", "**Example call:** `[" + key + "]",
			"type · runner · auth · risk:", "**Inputs:**", "**Outputs:**", "**Your credential can:**", "## Machine contract",
			"Do not infer the row shape from memory", "contract_sha256:", "## Invocation · ledger · repair", "receipt:", "ledger:", "repair:", "## Troubleshooting"} {
			if !strings.Contains(doc, block) {
				t.Errorf("%s document lacks %q:\n%s", key, block, doc)
			}
		}
		if len(doc) > 2500 {
			t.Errorf("%s document is %d bytes, over 2,500", key, len(doc))
		}
	}
	t.Logf("contract document sizes: %v", sizes)
	got := h.do(t, req{Method: "GET", Path: "/api/dispatch?key=ZZ_TEST_TEMPERATURE&format=json"})
	expect(t, got, 200, map[string]any{"key": "ZZ_TEST_TEMPERATURE", "type": "http", "auth": "none", "risk": "low",
		"example_call": "[ZZ_TEST_TEMPERATURE]37.77|-122.42[/ZZ_TEST_TEMPERATURE]"})
	// The run-now URL works as printed (with the credential as a header).
	run := got.JSON["run_now"].(string)
	res := h.do(t, req{Method: "GET", Path: strings.TrimPrefix(run, h.URL)})
	expect(t, res, 200, map[string]any{"ok": true, "ran": true})
	// Affordances are computed for the presented credential.
	tok, _, _ := mint(t, h, map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}})
	got = asToken(t, h, tok, req{Method: "GET", Path: "/api/dispatch?key=ZZ_TEST_TEMPERATURE&format=json"})
	if a := fmt.Sprint(got.JSON["affordances"]); !strings.Contains(a, "call") || strings.Contains(a, "edit") {
		t.Fatalf("token affordances %s", a)
	}
	expect(t, asToken(t, h, tok, req{Method: "GET", Path: "/api/dispatch?key=ROUTER&format=json"}), 404, nil)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?key=ROUTER&format=yaml"}), 400, nil)
}

func TestRegistryDocument(t *testing.T) {
	h := startHost(t, nil)
	targets := rowgen.Targets()
	rows := []rowcall.Row{}
	for _, tg := range targets {
		rows = append(rows, tg.Row)
	}
	importRows(t, h, rows)
	got := h.do(t, req{Method: "GET", Path: "/api/dispatch?registry=1"})
	expect(t, got, 200, map[string]any{"count": len(targets)})
	tag := got.Header.Get("ETag")
	if tag == "" {
		t.Fatal("no ETag")
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?registry=1", Header: map[string]string{"If-None-Match": tag}}), 304, nil)
	// gzip when asked (Go's client would decompress silently, so ask by hand).
	hr, _ := http.NewRequest("GET", h.URL+"/api/dispatch?registry=1", nil)
	hr.Header.Set("x-terminal-key", h.Key)
	hr.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(hr)
	if err != nil || res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip: %v %v", err, res.Header)
	}
	zr, _ := gzip.NewReader(res.Body)
	plain, _ := io.ReadAll(zr)
	res.Body.Close()
	if !bytes.Contains(plain, []byte(`"count":8`)) {
		t.Fatalf("gzipped registry %s", plain[:min(80, len(plain))])
	}
	// A change makes a new ETag.
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/FX_CONVERT", Body: map[string]any{"planner_rank": 5}}), 200, nil)
	got = h.do(t, req{Method: "GET", Path: "/api/dispatch?registry=1", Header: map[string]string{"If-None-Match": tag}})
	expect(t, got, 200, nil)
	// A token sees its scope only.
	tok, _, _ := mint(t, h, map[string]any{"categories": []string{"maps", "media"}})
	expect(t, asToken(t, h, tok, req{Method: "GET", Path: "/api/dispatch?registry=1"}), 200, map[string]any{"count": 2})
}

// rowcall export from one host and rowcall import into another: a dry run that
// reports what would change, the import, a no-op re-import, and an invalid row
// that stops everything.
func TestExportImport(t *testing.T) {
	a := startHost(t, nil)
	rows := rowgen.Noise(1200, 3)
	importRows(t, a, rows)
	dir := t.TempDir()
	file := filepath.Join(dir, "registry.json")
	out, err := exec.Command(binary, "export", "--url", a.URL, "--data", a.Data).Output()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, out, 0o600)

	b := startHost(t, nil)
	run := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append(append([]string{"import", file}, args...), "--url", b.URL, "--data", b.Data)...).CombinedOutput()
		return string(out), err
	}
	if out, err := run("--dry-run"); err != nil || !strings.Contains(out, "would create 1200, would update 0, unchanged 0") {
		t.Fatalf("dry run: %v %s", err, out)
	}
	if n := countRows(t, b); n != 0 {
		t.Fatalf("dry run wrote %d rows", n)
	}
	if out, err := run(); err != nil || !strings.Contains(out, "created 1200, updated 0, unchanged 0") {
		t.Fatalf("import: %v %s", err, out)
	}
	if out, err := run(); err != nil || !strings.Contains(out, "created 0, updated 0, unchanged 1200") {
		t.Fatalf("re-import: %v %s", err, out)
	}
	// Edit one row and break another in the file.
	var doc struct {
		Rows []map[string]any `json:"rows"`
	}
	json.Unmarshal(out, &doc)
	doc.Rows[5]["category"] = "renamed"
	edited, _ := json.Marshal(doc)
	os.WriteFile(file, edited, 0o600)
	if out, err := run("--dry-run"); err != nil || !strings.Contains(out, "would update 1") || !strings.Contains(out, "category") {
		t.Fatalf("edited dry run: %v %s", err, out)
	}
	doc.Rows[900]["type"] = "lambda"
	broken, _ := json.Marshal(doc)
	os.WriteFile(file, broken, 0o600)
	if out, err := run(); err == nil || !strings.Contains(out, "row 900") || !strings.Contains(out, "nothing was imported") {
		t.Fatalf("broken import: %v %s", err, out)
	}
	key := doc.Rows[5]["key"].(string)
	expect(t, b.do(t, req{Method: "GET", Path: "/api/directory/" + key}), 200, map[string]any{"version": 1})
}
