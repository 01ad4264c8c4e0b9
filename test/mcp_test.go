package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall/internal/testenv"
)

// The MCP server at /mcp, exercised by real clients nobody here wrote: the
// official Go SDK client (this file) and the official TypeScript SDK client
// (test/mcpclient/client.mjs, run with node).

// mcpRows creates the rows the MCP tests use, and returns the upstream.
//
//	ZZ_TEST_TEMPERATURE  tools    one string argument (no input_schema)
//	WEATHER_TYPED        weather  typed: input_schema latitude, longitude
//	BROKEN               tools    always answers ERR:http:400
//	ADMIN_ONLY           tools    wields the owner key: the owner's only
//	HIDDEN               tools    planner_visible = 0: callable, not listed
//	OFF                  tools    enabled = 0
func mcpRows(t *testing.T, h *host) *upstream {
	up := newUpstream(t, openMeteo)
	createRow(t, h, temperatureRow(up.URL))
	createRow(t, h, map[string]any{"key": "WEATHER_TYPED", "type": "http", "category": "weather",
		"target":  "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m",
		"content": "# WHAT: Weather forecast for a latitude and longitude, with typed arguments.\n# WHEN_TO_USE: planning around rain or wind at a known place.",
		"input_schema": `{"type":"object","properties":{"latitude":{"type":"number","minimum":-90,"maximum":90,"description":"degrees north"},` +
			`"longitude":{"type":"number","minimum":-180,"maximum":180,"description":"degrees east"}},"required":["latitude","longitude"]}`})
	createRow(t, h, map[string]any{"key": "BROKEN", "type": "http", "category": "tools", "target": "GET " + up.URL + "/nothing-here"})
	createRow(t, h, map[string]any{"key": "ADMIN_ONLY", "type": "http", "category": "tools", "target": "GET " + h.URL + "/api/directory", "auth": "bearer:ROWCALL_OWNER_KEY"})
	createRow(t, h, map[string]any{"key": "HIDDEN", "type": "http", "category": "tools", "target": "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2", "planner_visible": 0})
	createRow(t, h, map[string]any{"key": "OFF", "type": "http", "category": "tools", "target": "GET " + up.URL + "/v1/forecast", "enabled": 0})
	return up
}

// mcpSession is one Go SDK client session, counting list_changed notifications.
type mcpSession struct {
	cs       *sdk.ClientSession
	changed  chan struct{}
	progress chan *sdk.ProgressNotificationParams // the notifications/progress received (the first 64)
}

// headerTransport adds one header (the credential) to every request.
type headerTransport struct{ name, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

func connectMCP(t *testing.T, h *host, header, value string) *mcpSession {
	t.Helper()
	return connectMCPAt(t, h, header, value, "2025-11-25")
}

// connectMCPAt connects speaking protocol version (the Go SDK client's
// newest, the per-request protocol, when "").
func connectMCPAt(t *testing.T, h *host, header, value, version string) *mcpSession {
	t.Helper()
	return connectMCPTo(t, h.URL+"/mcp", header, value, version)
}

// connectMCPTo connects to endpoint (an /mcp address).
func connectMCPTo(t *testing.T, endpoint, header, value, version string) *mcpSession {
	t.Helper()
	s := &mcpSession{changed: make(chan struct{}, 16), progress: make(chan *sdk.ProgressNotificationParams, 64)}
	client := sdk.NewClient(&sdk.Implementation{Name: "rowcall-test-go", Version: "1.0.0"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.changed <- struct{}{} },
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			select {
			case s.progress <- req.Params:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: headerTransport{header, value}}, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	s.cs = cs
	t.Cleanup(func() { cs.Close() })
	return s
}

func (s *mcpSession) tools(t *testing.T) map[string]*sdk.Tool {
	t.Helper()
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

func (s *mcpSession) call(t *testing.T, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// waitChanged reports whether a list_changed arrived within d.
func (s *mcpSession) waitChanged(d time.Duration) bool {
	select {
	case <-s.changed:
		return true
	case <-time.After(d):
		return false
	}
}

// drain forgets notifications already received.
func (s *mcpSession) drain() {
	for {
		select {
		case <-s.changed:
		default:
			return
		}
	}
}

func names(tools map[string]*sdk.Tool) []string {
	var out []string
	for n := range tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func texts(res *sdk.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

// callFields is a row call's fields (receipt, trace, error), which the
// result's _meta holds under "rowcall/call".
func callFields(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	return structured(t, res.Meta["rowcall/call"])
}

func structured(t *testing.T, v any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(v)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s", b)
	}
	return m
}

// confirmed checks that the receipt id exists (GET /api/dispatch?confirm=,
// keyless) with status, and returns it.
func confirmed(t *testing.T, h *host, id, status string) map[string]any {
	t.Helper()
	if !strings.HasPrefix(id, "inv_") {
		t.Fatalf("no invocation id: %q", id)
	}
	got := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id, NoAuth: true})
	expect(t, got, 200, map[string]any{"confirmed": true, "status": status})
	return got.JSON["receipt"].(map[string]any)
}

// checkSucceeded asserts a successful call: the result as the first text block,
// the receipt (id and public link) in the second and in _meta (callFields),
// and the receipt confirmed by the API.
func checkSucceeded(t *testing.T, h *host, res *sdk.CallToolResult, want string) map[string]any {
	t.Helper()
	tx := texts(res)
	if res.IsError || len(tx) != 2 || !strings.Contains(tx[0], want) {
		t.Fatalf("result isError=%v %q, want %q", res.IsError, tx, want)
	}
	sc := callFields(t, res)
	id, _ := sc["invocation_id"].(string)
	if sc["ok"] != true || sc["public_receipt"] != h.URL+"/receipt/"+id || !strings.Contains(tx[1], id) || !strings.Contains(tx[1], h.URL+"/receipt/"+id) {
		t.Fatalf("receipt not reported: %v %q", sc, tx[1])
	}
	return confirmed(t, h, id, "PROVEN_MATERIAL_RESULT")
}

func TestMCPGoSDKClient(t *testing.T) {
	h := startHost(t, allowLoopback)
	up := mcpRows(t, h)

	// No credential: the API's literal 401.
	for _, m := range []string{"POST", "GET", "DELETE"} {
		expect(t, h.do(t, req{Method: m, Path: "/mcp", Body: `{}`, NoAuth: true}), 401, map[string]any{"error": "unauthorized"})
	}
	expect(t, h.do(t, req{Method: "POST", Path: "/mcp", Body: `{}`, NoAuth: true, Header: map[string]string{"Authorization": "Bearer rct_nope"}}), 401,
		map[string]any{"error": "unauthorized"})

	owner := connectMCP(t, h, "x-terminal-key", h.Key)
	init := owner.cs.InitializeResult()
	if init.Capabilities.Tools == nil || !init.Capabilities.Tools.ListChanged || init.ServerInfo.Name != "rowcall" {
		t.Fatalf("initialize: %+v %+v", init.Capabilities, init.ServerInfo)
	}

	// tools/list: the meta-tools and the visible rows, typed where a row has a schema.
	tools := owner.tools(t)
	if got, want := names(tools), []string{"ADMIN_ONLY", "BROKEN", "WEATHER_TYPED", "ZZ_TEST_TEMPERATURE", "call_capability", "search_capabilities"}; !slices.Equal(got, want) {
		t.Fatalf("owner tools %v, want %v", got, want)
	}
	temp := tools["ZZ_TEST_TEMPERATURE"]
	schema := structured(t, temp.InputSchema)
	if !strings.HasPrefix(temp.Description, "Current temperature in Celsius") || !strings.Contains(temp.Description, "When to use: a capability needs the live temperature") ||
		!strings.Contains(fmt.Sprint(schema["properties"]), "$1=latitude | $2=longitude") || !strings.Contains(fmt.Sprint(schema["properties"]), "37.77|-122.42") {
		t.Fatalf("ZZ_TEST_TEMPERATURE: %q %v", temp.Description, schema)
	}
	typedSchema := structured(t, tools["WEATHER_TYPED"].InputSchema)
	if fmt.Sprint(typedSchema["required"]) != "[latitude longitude]" || typedSchema["type"] != "object" ||
		fmt.Sprint(typedSchema["properties"].(map[string]any)["latitude"]) != "map[description:degrees north maximum:90 minimum:-90 type:number]" {
		t.Fatalf("WEATHER_TYPED schema %v", typedSchema)
	}

	// tools/call: dispatched, answered with the result and the receipt.
	rc := checkSucceeded(t, h, owner.call(t, "ZZ_TEST_TEMPERATURE", map[string]any{"args": "37.77|-122.42"}), `"temperature_2m":15.7`)
	if rc["actor"] != "owner:terminal-key" || rc["key"] != "ZZ_TEST_TEMPERATURE" || rc["input_sha256"] != sha("37.77|-122.42") {
		t.Fatalf("receipt %v", rc)
	}
	// Named arguments are joined in the schema's order, whatever the object's order.
	checkSucceeded(t, h, owner.call(t, "WEATHER_TYPED", map[string]any{"longitude": -122.42, "latitude": 37.77}), "temperature_2m")
	if q := up.requests()[len(up.requests())-1].Query; !strings.Contains(q, "latitude=37.77&longitude=-122.42") {
		t.Fatalf("upstream got %s", q)
	}
	// The gate still judges: out-of-range arguments are refused, recorded, not run.
	res := owner.call(t, "WEATHER_TYPED", map[string]any{"latitude": 123, "longitude": 0})
	sc := callFields(t, res)
	if !res.IsError || sc["error"] != "invalid_arguments" || sc["ran"] != false || !strings.Contains(texts(res)[0], "at /latitude") {
		t.Fatalf("refusal: %v %q", sc, texts(res))
	}
	confirmed(t, h, sc["invocation_id"].(string), "RECORDED_NOT_MATERIAL")
	// An ERR: result is an error result, with its receipt.
	res = owner.call(t, "BROKEN", nil)
	if tx := texts(res); !res.IsError || !strings.HasPrefix(tx[0], "ERR:http:400") || len(tx) != 2 {
		t.Fatalf("BROKEN: %v %q", res.IsError, tx)
	}
	confirmed(t, h, callFields(t, res)["invocation_id"].(string), "PROVEN_MATERIAL_FAILURE")
	// Arguments a positional body cannot carry are refused before dispatch.
	if res = owner.call(t, "WEATHER_TYPED", map[string]any{"latitude": 1, "altitude": 2}); !res.IsError || !strings.Contains(texts(res)[0], `unknown argument "altitude"`) {
		t.Fatalf("unknown argument: %q", texts(res))
	}

	// search_capabilities: the ask index, each match with how to call it.
	res = owner.call(t, "search_capabilities", map[string]any{"query": "current temperature for a coordinate"})
	sc = structured(t, res.StructuredContent)
	matches, _ := sc["matches"].([]any)
	if res.IsError || len(matches) == 0 {
		t.Fatalf("search: %q %v", texts(res), sc)
	}
	first := matches[0].(map[string]any)
	if first["key"] != "ZZ_TEST_TEMPERATURE" || !strings.Contains(first["call"].(string), `call_capability {"key":"ZZ_TEST_TEMPERATURE","args":"37.77|-122.42"}`) ||
		!strings.Contains(texts(res)[0], "1. ZZ_TEST_TEMPERATURE — Current temperature") {
		t.Fatalf("first match %v\n%s", first, texts(res)[0])
	}
	for _, m := range matches {
		if k := m.(map[string]any)["key"]; k == "HIDDEN" || k == "OFF" {
			t.Fatalf("search offered %v", k)
		}
	}

	// call_capability: any row by key, with args or named arguments.
	checkSucceeded(t, h, owner.call(t, "call_capability", map[string]any{"key": "ZZ_TEST_TEMPERATURE", "args": "37.77|-122.42"}), "temperature_2m")
	checkSucceeded(t, h, owner.call(t, "call_capability", map[string]any{"key": "WEATHER_TYPED", "arguments": map[string]any{"latitude": 1, "longitude": 2}}), "temperature_2m")
	checkSucceeded(t, h, owner.call(t, "call_capability", map[string]any{"key": "HIDDEN", "args": "1|2"}), "temperature_2m") // not listed, still callable
	res = owner.call(t, "call_capability", map[string]any{"key": "ZZ_TEST_TEMPERATUR"})
	sc = callFields(t, res)
	if !res.IsError || sc["error"] != "unknown_key" || !slices.Contains(sc["did_you_mean"].([]any), any("ZZ_TEST_TEMPERATURE")) {
		t.Fatalf("unknown key: %v", sc)
	}
	if res = owner.call(t, "call_capability", map[string]any{"key": "OFF"}); !res.IsError || callFields(t, res)["error"] != "row_disabled" {
		t.Fatalf("disabled row: %q", texts(res))
	}

	// A token sees only its scope, minus what it could never call.
	secret, tokID, _ := mint(t, h, map[string]any{"categories": []string{"tools"}})
	scoped := connectMCP(t, h, "Authorization", "Bearer "+secret)
	if got, want := names(scoped.tools(t)), []string{"BROKEN", "ZZ_TEST_TEMPERATURE", "call_capability", "search_capabilities"}; !slices.Equal(got, want) {
		t.Fatalf("token tools %v, want %v", got, want)
	}
	rc = checkSucceeded(t, h, scoped.call(t, "ZZ_TEST_TEMPERATURE", map[string]any{"args": "37.77|-122.42"}), "temperature_2m")
	if rc["actor"] != "token:"+tokID || rc["token_id"] != tokID {
		t.Fatalf("token receipt %v", rc)
	}
	if res = scoped.call(t, "call_capability", map[string]any{"key": "WEATHER_TYPED", "arguments": map[string]any{"latitude": 1, "longitude": 2}}); !res.IsError ||
		callFields(t, res)["error"] != "unknown_key" {
		t.Fatalf("out of scope: %q", texts(res))
	}
	res = scoped.call(t, "call_capability", map[string]any{"key": "ADMIN_ONLY"})
	if sc = callFields(t, res); !res.IsError || sc["error"] != "owner_only:ADMIN_ONLY" {
		t.Fatalf("owner-only row: %v", sc)
	}
	confirmed(t, h, sc["invocation_id"].(string), "RECORDED_NOT_MATERIAL")
	res = scoped.call(t, "search_capabilities", map[string]any{"query": "weather forecast temperature"})
	for _, m := range structured(t, res.StructuredContent)["matches"].([]any) {
		if k := m.(map[string]any)["key"]; k != "ZZ_TEST_TEMPERATURE" && k != "BROKEN" {
			t.Fatalf("token search offered %v", k)
		}
	}
	// A session belongs to the credential that opened it.
	hijack := h.do(t, req{Method: "POST", Path: "/mcp", NoAuth: true, Body: `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`,
		Header: map[string]string{"Authorization": "Bearer " + secret, "Mcp-Session-Id": owner.cs.ID(), "Accept": "application/json, text/event-stream"}})
	expect(t, hijack, 403, map[string]any{"error": "forbidden"})

	// list_changed, without reconnecting: a row created through the REST API
	// reaches every session that can see it...
	owner.drain()
	scoped.drain()
	createRow(t, h, map[string]any{"key": "NEW_TOOL", "type": "http", "category": "tools", "target": "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2",
		"content": "# WHAT: A tool created while clients were connected."})
	if !owner.waitChanged(10*time.Second) || !scoped.waitChanged(10*time.Second) {
		t.Fatal("no notifications/tools/list_changed after a row was created")
	}
	if _, ok := owner.tools(t)["NEW_TOOL"]; !ok {
		t.Fatal("NEW_TOOL not listed after list_changed")
	}
	if _, ok := scoped.tools(t)["NEW_TOOL"]; !ok {
		t.Fatal("NEW_TOOL not listed for the token after list_changed")
	}
	checkSucceeded(t, h, owner.call(t, "NEW_TOOL", map[string]any{"args": "1|2"}), "temperature_2m")
	// ...and only those: a row outside the token's scope tells the owner alone.
	createRow(t, h, map[string]any{"key": "NEW_WEATHER", "type": "http", "category": "weather", "target": "GET " + up.URL + "/v1/forecast"})
	if !owner.waitChanged(10 * time.Second) {
		t.Fatal("owner not told about NEW_WEATHER")
	}
	if scoped.waitChanged(1500 * time.Millisecond) {
		t.Fatal("the token's session was told about a row outside its scope")
	}
	// An edit through the API changes the description.
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/NEW_TOOL", Body: map[string]any{"content": "# WHAT: Edited while connected."}}), 200, nil)
	if !owner.waitChanged(10 * time.Second) {
		t.Fatal("no list_changed after an edit")
	}
	if d := owner.tools(t)["NEW_TOOL"].Description; d != "Edited while connected." {
		t.Fatalf("description after edit %q", d)
	}
	// A change made straight in SQL is seen too (the event log's triggers).
	if _, err := h.db(t).Exec(`DELETE FROM directory WHERE key = 'NEW_TOOL'`); err != nil {
		t.Fatal(err)
	}
	if !owner.waitChanged(10*time.Second) || !scoped.waitChanged(10*time.Second) {
		t.Fatal("no list_changed after a delete in SQL")
	}
	if _, ok := owner.tools(t)["NEW_TOOL"]; ok {
		t.Fatal("NEW_TOOL still listed after its delete")
	}

	// A revoked token stops at the door, session or not.
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/tokens/" + tokID}), 200, nil)
	if _, err := scoped.cs.ListTools(context.Background(), nil); err == nil {
		t.Fatal("a revoked token still lists tools")
	}
}

// The projected list is capped; the meta-tools still reach every row.
func TestMCPToolCap(t *testing.T) {
	h := startHost(t, allowLoopback)
	up := newUpstream(t, openMeteo)
	for i := range 60 {
		createRow(t, h, map[string]any{"key": fmt.Sprintf("ROW_%02d", i), "type": "http", "category": "bulk",
			"target": "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2", "content": fmt.Sprintf("# WHAT: Bulk capability number %02d.", i)})
	}
	createRow(t, h, map[string]any{"key": "ZZ_RARE", "type": "http", "category": "bulk", "target": "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2",
		"content": "# WHAT: Reports the barometric pressure at sea level for a coordinate.\n# ARGS: $1=latitude | $2=longitude"})
	s := connectMCP(t, h, "Authorization", "Bearer "+h.Key)
	tools := s.tools(t)
	if len(tools) != 52 || tools["ROW_00"] == nil || tools["ROW_49"] == nil || tools["ROW_50"] != nil || tools["ZZ_RARE"] != nil {
		t.Fatalf("%d tools: %v", len(tools), names(tools))
	}
	res := s.call(t, "search_capabilities", map[string]any{"query": "barometric pressure", "limit": 3})
	m := structured(t, res.StructuredContent)["matches"].([]any)
	if len(m) == 0 || m[0].(map[string]any)["key"] != "ZZ_RARE" || m[0].(map[string]any)["listed_as_tool"] != false {
		t.Fatalf("search: %q", texts(res))
	}
	checkSucceeded(t, h, s.call(t, "call_capability", map[string]any{"key": "ZZ_RARE", "args": "1|2"}), "temperature_2m")
}

// mcpClientDir holds the Node client; its dependencies are installed from the
// lockfile when missing (make test does it first).
func mcpClientDir(t *testing.T) string {
	return testenv.NPM(t, "mcpclient", filepath.Join("node_modules", "@modelcontextprotocol", "sdk", "package.json"))
}

func TestMCPTypeScriptClient(t *testing.T) {
	dir := mcpClientDir(t)
	h := startHost(t, allowLoopback)
	up := mcpRows(t, h)
	secret, _, _ := mint(t, h, map[string]any{"categories": []string{"tools"}})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCP_URL="+h.URL+"/mcp", "OWNER_KEY="+h.Key, "TOKEN="+secret,
		"CALL_KEY=ZZ_TEST_TEMPERATURE", "CALL_ARGS=37.77|-122.42", "QUERY=current temperature for a coordinate")
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := nodeEvents(t, stdout, &stderr, func(name string, ev map[string]any) {
		if name == "waiting" { // the client holds its session open: change the directory under it
			createRow(t, h, map[string]any{"key": "ADDED_LIVE", "type": "http", "category": "tools", "target": "GET " + up.URL + "/v1/forecast",
				"content": "# WHAT: Created through the REST API while the TypeScript client listened."})
		}
	})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node client: %v\n%s", err, stderr.String())
	}
	if events["done"] == nil {
		t.Fatalf("node client did not finish: %v\n%s", events, stderr.String())
	}

	init := events["initialized"]
	if init["protocolVersion"] != "2025-11-25" || fmt.Sprint(init["capabilities"]) != "map[completions:map[] prompts:map[] resources:map[subscribe:true] tools:map[listChanged:true]]" ||
		init["server"].(map[string]any)["name"] != "rowcall" {
		t.Fatalf("initialize %v", init)
	}
	if !sameSet(events["listed"]["tools"], "search_capabilities", "call_capability", "ZZ_TEST_TEMPERATURE", "WEATHER_TYPED", "ADMIN_ONLY", "BROKEN") {
		t.Fatalf("listed %v", events["listed"]["tools"])
	}
	// JavaScript keeps an object's key order: the properties arrive in the
	// row's declared order, which is the argument order.
	if order := fmt.Sprint(events["listed"]["order"].(map[string]any)["WEATHER_TYPED"]); order != "[latitude longitude]" {
		t.Fatalf("WEATHER_TYPED properties in order %s", order)
	}
	for _, step := range []string{"called", "called_meta"} {
		res := events[step]["result"].(map[string]any)
		content := res["content"].([]any)
		sc := res["_meta"].(map[string]any)["rowcall/call"].(map[string]any)
		if res["isError"] == true || len(content) != 2 || !strings.Contains(content[0].(map[string]any)["text"].(string), `"temperature_2m":15.7`) {
			t.Fatalf("%s: %v", step, res)
		}
		rc := confirmed(t, h, sc["invocation_id"].(string), "PROVEN_MATERIAL_RESULT")
		if rc["actor"] != "owner:bearer" || sc["public_receipt"] != h.URL+"/receipt/"+sc["invocation_id"].(string) {
			t.Fatalf("%s receipt %v %v", step, rc, sc)
		}
	}
	searched := events["searched"]["result"].(map[string]any)
	if m := searched["structuredContent"].(map[string]any)["matches"].([]any); len(m) == 0 || m[0].(map[string]any)["key"] != "ZZ_TEST_TEMPERATURE" {
		t.Fatalf("searched %v", searched)
	}
	if unknown := events["called_unknown"]["result"].(map[string]any); unknown["isError"] != true ||
		unknown["_meta"].(map[string]any)["rowcall/call"].(map[string]any)["error"] != "unknown_key" {
		t.Fatalf("called_unknown %v", unknown)
	}
	if !sameSet(events["scoped"]["tools"], "search_capabilities", "call_capability", "ZZ_TEST_TEMPERATURE", "BROKEN") {
		t.Fatalf("token-scoped tools %v", events["scoped"]["tools"])
	}
	changed := events["list_changed"]
	if !slices.Contains(changed["tools"].([]any), any("ADDED_LIVE")) || changed["sessionId"] != init["sessionId"] || init["sessionId"] == nil {
		t.Fatalf("after list_changed %v (session %v → %v)", changed["tools"], init["sessionId"], changed["sessionId"])
	}
}

func sameSet(list any, want ...string) bool {
	items, _ := list.([]any)
	var got []string
	for _, v := range items {
		s, _ := v.(string)
		got = append(got, s)
	}
	sort.Strings(got)
	sort.Strings(want)
	return slices.Equal(got, want)
}
