package test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// Shape mode builds the outbound request, sends nothing, and strips credential
// material; a variable missing from the environment gives "headers":{}.
func TestShapeMode(t *testing.T) {
	up := newUpstream(t, openMeteo)
	const secret = "sk-live-9f8e7d6c5b4a"
	h := startHost(t, allowLoopback, "SHAPE_API_KEY="+secret)
	createRow(t, h, map[string]any{"key": "SHAPED", "type": "http", "target": "POST " + up.URL + "/v1/items?q=$1",
		"auth": "bearer:SHAPE_API_KEY", "content": `# WHAT: shaped
{"name":"$2","note":"$3"}`})
	createRow(t, h, map[string]any{"key": "NO_SECRET", "type": "http", "target": "GET " + up.URL + "/v1/forecast", "auth": "bearer:NOT_IN_THE_ENVIRONMENT"})

	got := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "SHAPED", "body": `a b|say "hi"|x`, "shape": true}})
	expect(t, got, 200, map[string]any{"ran": false})
	if strings.Contains(string(got.Raw), secret) {
		t.Fatalf("secret in shape answer: %s", got.Raw)
	}
	plan := got.JSON["shape"].(map[string]any)
	if plan["method"] != "POST" || plan["url"] != up.URL+"/v1/items?q=a+b" {
		t.Fatalf("plan %v", plan)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(plan["body"].(string)), &body); err != nil || body["name"] != `say "hi"` {
		t.Fatalf("plan body %v (%v)", plan["body"], err)
	}
	if hd, _ := json.Marshal(plan["headers"]); strings.Contains(strings.ToLower(string(hd)), "authorization") {
		t.Fatalf("authorization in preview headers: %s", hd)
	}
	got = h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "NO_SECRET", "shape": true}})
	if hd, _ := json.Marshal(got.JSON["shape"].(map[string]any)["headers"]); string(hd) != "{}" {
		t.Fatalf("headers %s, want {}", hd)
	}
	if n := len(up.requests()); n != 0 {
		t.Fatalf("shape mode sent %d requests", n)
	}
	// The preview is recorded, as not material.
	id := proof(t, got)["invocation_id"].(string)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id}), 200, map[string]any{"status": "RECORDED_NOT_MATERIAL"})

	// An fn row's shape names the module and its argv, as the other runners'
	// SHAPE: lines do, and runs nothing (no receipt of a run: not material).
	echo, _ := wasmexamples.ByName("echo")
	expect(t, putModule(t, h, "echo", echo.Wasm), 200, nil)
	createRow(t, h, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": echo.Content})
	got = h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "ECHO", "body": "a|b", "shape": true}})
	expect(t, got, 200, map[string]any{"ran": false, "result": "SHAPE:fn:echo 1 args"})
	if argv, _ := json.Marshal(got.JSON["shape"].(map[string]any)["argv"]); string(argv) != `["echo","a|b"]` {
		t.Fatalf("fn shape argv %s", argv)
	}

	// A flow's shape is the plan of its steps; nothing runs.
	createRow(t, h, map[string]any{"key": "PLANNED", "type": "flow", "content": "# WHAT: plan\nSHAPED: $1|x|y => FIRST\n> NO_SECRET: $PREV"})
	got = h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "PLANNED", "body": "q", "shape": true}})
	if plan, _ := json.Marshal(got.JSON["shape"]); !strings.Contains(string(plan), "SHAPED") || !strings.Contains(string(plan), "NO_SECRET") {
		t.Fatalf("flow plan %s", plan)
	}
	if n := len(up.requests()); n != 0 {
		t.Fatalf("flow shape sent %d requests", n)
	}
}

// A flow chains rows with $PREV and bindings, fans out concurrently, stops at
// the first ERR, and every step leaves its own receipt under the flow's trace.
func TestFlowRuns(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fail":
			w.WriteHeader(500)
			fmt.Fprint(w, "boom")
		default:
			fmt.Fprintf(w, `{"path":%q,"q":%q}`, r.URL.Path, r.URL.Query().Get("q"))
		}
	})
	h := startHost(t, allowLoopback)
	createRow(t, h, map[string]any{"key": "ECHO_A", "type": "http", "target": "GET " + up.URL + "/a?q=$1"})
	createRow(t, h, map[string]any{"key": "ECHO_B", "type": "http", "target": "GET " + up.URL + "/b?q=$1"})
	createRow(t, h, map[string]any{"key": "FAILS", "type": "http", "target": "GET " + up.URL + "/fail"})
	createRow(t, h, map[string]any{"key": "CHAIN", "type": "flow", "content": "# WHAT: chain\nECHO_A: $1 => FIRST\n> { ECHO_B: $FIRST | ECHO_A: two }\n> ECHO_B: $PREV.ECHO_A"})
	createRow(t, h, map[string]any{"key": "STOPS", "type": "flow", "content": "# WHAT: stops\nECHO_A: x\n> FAILS: y\n> ECHO_B: never"})
	createRow(t, h, map[string]any{"key": "PICKS", "type": "flow", "content": "# WHAT: reads a field of an http answer\nECHO_A: $1\n> ECHO_B: $PREV.q"})
	createRow(t, h, map[string]any{"key": "LOOP", "type": "flow", "content": "# WHAT: calls itself\nLOOP: again"})

	got := dispatchCall(t, h, "CHAIN", "one")
	expect(t, got, 200, map[string]any{"ok": true})
	if r := got.JSON["result"].(string); !strings.HasPrefix(r, `HTTP 200:{"path":"/b","q":"HTTP 200:{\"path\":\"/a\",\"q\":\"two\"}"}`) {
		t.Fatalf("result %q", r)
	}
	// $PREV.path after an http step reads the JSON body of its HTTP 200:… answer.
	expect(t, dispatchCall(t, h, "PICKS", "one"), 200, map[string]any{"ok": true, "result": `HTTP 200:{"path":"/b","q":"one"}`})
	trace := got.JSON["trace"].(string)
	var steps, nested int
	db := h.db(t)
	db.QueryRow(`SELECT COUNT(*), COUNT(parent) FROM receipts WHERE trace = ?`, trace).Scan(&steps, &nested)
	if steps != 5 || nested != 4 {
		t.Fatalf("%d receipts (%d nested) for the flow's trace, want 5 and 4", steps, nested)
	}
	byTrace := h.do(t, req{Method: "GET", Path: "/api/receipts?trace=" + trace})
	if list, _ := byTrace.JSON["receipts"].([]any); len(list) != 5 {
		t.Fatalf("GET /api/receipts?trace=: %s", byTrace.Raw)
	}

	n := len(up.requests())
	expect(t, dispatchCall(t, h, "STOPS", ""), 200, map[string]any{"ok": false, "result": "ERR:http:500:boom"})
	if got := len(up.requests()) - n; got != 2 {
		t.Fatalf("flow made %d calls after the ERR step, want it to stop (2 calls)", got)
	}
	got = dispatchCall(t, h, "LOOP", "")
	if r := got.JSON["result"].(string); !strings.Contains(r, "depth") {
		t.Fatalf("self-calling flow: %q", r)
	}
}

// The contract fingerprint covers what defines the call and the description a
// caller chooses it by (the # WHAT line), as the seed's hash does: an examples
// edit or an edit of the other documentation lines keeps it; a # WHAT, category
// or target edit changes it.
func TestContractFingerprint(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback)
	row := temperatureRow(up.URL)
	createRow(t, h, row)
	contract := func() string {
		got := dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "37.77|-122.42")
		id := proof(t, got)["invocation_id"].(string)
		rc := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id}).JSON["receipt"].(map[string]any)
		return rc["contract_sha256"].(string)
	}
	patch := func(field, value string) {
		t.Helper()
		expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/ZZ_TEST_TEMPERATURE", Body: map[string]any{field: value}}), 200, nil)
	}
	base := contract()
	patch("examples", `["51.51|-0.13"]`)
	if c := contract(); c != base {
		t.Fatalf("examples edit changed the contract: %s != %s", c, base)
	}
	content := row["content"].(string)
	what, _, _ := strings.Cut(content, "\n")
	patch("content", what+"\n# WHEN_TO_USE: reworded.\n# ARGS: $1 | $2\n# OUTPUT: reworded too")
	if c := contract(); c != base {
		t.Fatalf("an edit of documentation lines other than # WHAT changed the contract")
	}
	patch("content", "# WHAT: Something else entirely.\n# ARGS: $1 | $2")
	described := contract()
	if described == base {
		t.Fatalf("a # WHAT edit kept the contract")
	}
	patch("category", "weather")
	categorized := contract()
	if categorized == described {
		t.Fatalf("a category edit kept the contract")
	}
	patch("target", "GET "+up.URL+"/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m,wind_speed_10m")
	targeted := contract()
	if targeted == categorized {
		t.Fatalf("target edit kept the contract")
	}
	// output_schema is in the contract when set; a row without one has the
	// fingerprint it had before the column existed.
	patch("output_schema", `{"type":"object","required":["current"]}`)
	if c := contract(); c == targeted {
		t.Fatalf("an output_schema edit kept the contract")
	}
	patch("output_schema", "")
	if c := contract(); c != targeted {
		t.Fatalf("without output_schema the contract is %s, not %s as before", c, targeted)
	}
	bad := h.do(t, req{Method: "PATCH", Path: "/api/directory/ZZ_TEST_TEMPERATURE", Body: map[string]any{"output_schema": `{"type":"array"}`}})
	expect(t, bad, 400, map[string]any{"field": "output_schema"})
	if !strings.Contains(bad.JSON["message"].(string), `of type "object"`) {
		t.Fatalf("an array output_schema: %s", bad.Raw)
	}
}

// The seed's DIR_PATCH: a row that edits another row through this host's own
// API, its JSON argument passed intact by $2+.
func TestDirPatchThroughOwnAPI(t *testing.T) {
	h := startHost(t, allowLoopback)
	createRow(t, h, map[string]any{"key": "ROUTER", "type": "agent", "target": "grok-4.3", "content": "old prompt"})
	createRow(t, h, map[string]any{"key": "DIR_PATCH", "type": "http", "target": "PATCH " + h.URL + "/api/directory/$1",
		"auth": "bearer:ROWCALL_OWNER_KEY", "content": "# ARGS: key | json_body\n# EX: [DIR_PATCH]ROUTER|{\"content\":\"new prompt text\"}[/DIR_PATCH]\n$2+"})
	got := dispatchCall(t, h, "DIR_PATCH", `ROUTER|{"content":"a|b"}`)
	expect(t, got, 200, map[string]any{"ok": true})
	if strings.Contains(string(got.Raw), h.Key) {
		t.Fatalf("owner key in the answer: %s", got.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/ROUTER"}), 200, map[string]any{"content": "a|b", "version": 2})
}

// rowcall ask finds a row by plain words and prints the call that runs it;
// running that line as printed calls the row. Words that fit nothing exit 1.
func TestCLIAsk(t *testing.T) {
	h := startHost(t, []string{"--no-examples=false"})
	cmd := exec.Command(binary, "ask", "uppercase", "some", "text", "--limit", "2", "--url", h.URL, "--data", h.Data)
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=")
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) < 2 || !strings.HasPrefix(lines[0], "UPPER  ") || !strings.HasPrefix(lines[1], "  rowcall call UPPER '") {
		t.Fatalf("ask: %v\n%s", err, out)
	}
	call := exec.Command("sh", "-c", `"$0" `+strings.TrimPrefix(strings.TrimSpace(lines[1]), "rowcall ")+` --url "$1" --data "$2"`, binary, h.URL, h.Data)
	call.Env = cmd.Env
	if res, err := call.Output(); err != nil || string(res) != "HELLO WÖRLD\n" {
		t.Fatalf("the printed call %q: %v %q", lines[1], err, res)
	}
	cmd = exec.Command(binary, "ask", "--url", h.URL, "--data", h.Data)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "usage: rowcall ask") {
		t.Fatalf("ask without words: %v %s", err, out)
	}
	words := startHost(t, []string{"--no-examples=false"}, "ROWCALL_EMBED_PROVIDER=off") // words alone: nothing shares "xyzzy"
	cmd = exec.Command(binary, "ask", "xyzzy", "--url", words.URL, "--data", words.Data)
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=")
	var exit *exec.ExitError
	if out, err := cmd.CombinedOutput(); !errors.As(err, &exit) || exit.ExitCode() != 1 || string(out) != "no row fits \"xyzzy\"\n" {
		t.Fatalf("ask that fits nothing: %v %q", err, out)
	}
}

// rowcall call and rowcall receipt against a running host.
func TestCLICallAndReceipt(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback)
	createRow(t, h, temperatureRow(up.URL))
	cmd := exec.Command(binary, "call", "ZZ_TEST_TEMPERATURE", "37.77|-122.42", "--url", h.URL, "--data", h.Data)
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "HTTP 200:{") {
		t.Fatalf("call: %v %s %s", err, out, stderr.String())
	}
	id := strings.Fields(strings.TrimPrefix(stderr.String(), "receipt "))[0]
	id = strings.TrimSuffix(id, ":")
	cmd = exec.Command(binary, "receipt", id, "--url", h.URL)
	out, err = cmd.Output()
	if err != nil || !strings.Contains(string(out), `"PROVEN_MATERIAL_RESULT"`) {
		t.Fatalf("receipt %s: %v %s", id, err, out)
	}
	cmd = exec.Command(binary, "call", "NOPE", "--url", h.URL, "--data", h.Data)
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "unknown_key") {
		t.Fatalf("unknown key: %v %s", err, out)
	}
}
