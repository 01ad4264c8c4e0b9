package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/importdoc"
	"github.com/rowcall/rowcall/internal/openapi"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/internal/typed"
)

const ownerKey = "rk_test_owner"

// host is a rowcall host in process over a fresh database, whose rows may
// reach loopback, served on loopback.
type host struct {
	t   testing.TB
	url string
}

func newHost(t testing.TB) *host { return newHostConverting(t, true) }

// newHostConverting is newHost, with POST /api/import/openapi's converter or
// without it (as on the worker).
func newHostConverting(t testing.TB, convert bool) *host { return newHostWith(t, convert, nil) }

// newHostWith is newHostConverting whose rows read the variables vars.
func newHostWith(t testing.TB, convert bool, vars map[string]string) *host {
	t.Helper()
	conv := openapi.Import
	if !convert {
		conv = nil
	}
	signer, _ := testenv.Signer(t)
	s := app.ReadSettings(func(n string) string {
		return map[string]string{"ROWCALL_ALLOW_OUTBOUND": "127.0.0.1/32", "ROWCALL_NO_EXAMPLES": "1"}[n]
	})
	a, err := app.New(s, app.Platform{DB: testdb.Open(t), Signer: signer, OwnerKeys: func() []string { return []string{ownerKey} },
		Env:     rowcall.EnvFunc(func(n string) (string, bool) { v, ok := vars[n]; return v, ok }),
		Client:  func(p outbound.Policy, timeout time.Duration) *http.Client { return p.Client(timeout) },
		OpenAPI: conv,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	return &host{t: t, url: srv.URL}
}

// do sends one request with the owner key (or credential) and decodes the JSON answer into out.
func (h *host) do(method, path, credential string, body []byte, out any) int {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.url+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+credential)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
	}
	return res.StatusCode
}

type report struct {
	OK           bool     `json:"ok"`
	StateChanged bool     `json:"state_changed"`
	Created      []string `json:"created"`
	Updated      []struct {
		Key    string   `json:"key"`
		Fields []string `json:"fields"`
	} `json:"updated"`
	Unchanged int `json:"unchanged"`
	Invalid   []struct {
		Key   string `json:"key"`
		Error string `json:"error"`
	} `json:"invalid"`
	Skipped []string `json:"skipped"`
	Error   string   `json:"error"`
	Message string   `json:"message"`
	Source  string   `json:"source"`
	Server  string   `json:"server"`
	Rows    []struct {
		Key    string `json:"key"`
		Action string `json:"action"`
		Type   string `json:"type"`
		Origin string `json:"origin"`
		Auth   string `json:"auth"`
	} `json:"rows"`
}

func (h *host) importDoc(doc []byte, query string) report {
	h.t.Helper()
	var r report
	if st := h.do("POST", "/api/import/openapi?"+query, ownerKey, doc, &r); st != 200 || !r.OK {
		h.t.Fatalf("import: HTTP %d %+v", st, r)
	}
	return r
}

// echo is the upstream: it answers every request with its method, path,
// query and body.
func echo(t testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "path": r.URL.EscapedPath(), "query": r.URL.Query(), "body": string(b)})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// operation is one operation of a document, read independently of the
// converter, in the order Convert reads them (paths, then methods).
type operation struct {
	method, path string
	query        []string
	body         []string // the top-level properties of a JSON request body
}

func operations(t *testing.T, doc []byte) []operation {
	d, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out []operation
	m := d.Paths.Map()
	var paths []string
	for p := range m {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, method := range []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"} {
			op := m[p].GetOperation(method)
			if op == nil {
				continue
			}
			o := operation{method: method, path: p}
			for _, ps := range [][]*openapi3.ParameterRef{op.Parameters, m[p].Parameters} {
				for _, pr := range ps {
					if pr.Value.In == "query" && !slices.Contains(o.query, pr.Value.Name) {
						o.query = append(o.query, pr.Value.Name)
					}
				}
			}
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
					for name, p := range mt.Schema.Value.Properties {
						if !p.Value.ReadOnly {
							o.body = append(o.body, name)
						}
					}
				}
			}
			out = append(out, o)
		}
	}
	return out
}

// arguments are named arguments for every property of a row's input_schema,
// typed as the schema says: a string is "v_<name>" (so each path slot is
// told apart) unless an enum names the values.
func arguments(t *testing.T, schema string) (json.RawMessage, map[string]string) {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	args, text := map[string]any{}, map[string]string{}
	for name, p := range s.Properties {
		typ, _ := p["type"].(string)
		if list, ok := p["type"].([]any); ok && len(list) > 0 {
			typ, _ = list[0].(string)
		}
		v := importdoc.Sample(p)
		if (typ == "" || typ == "string") && p["enum"] == nil {
			v = "v_" + name
		}
		text[name] = v
		var x any
		if typ != "" && typ != "string" && json.Unmarshal([]byte(v), &x) == nil {
			args[name] = x
		} else {
			args[name] = v
		}
	}
	b, _ := json.Marshal(args)
	return b, text
}

type dispatched struct {
	OK     bool   `json:"ok"`
	Ran    bool   `json:"ran"`
	Result string `json:"result"`
	Error  string `json:"error"`
}

var documents = []struct{ file, prefix string }{
	{"petstore.yaml", "PET_"},   // OpenAPI 3.0, YAML
	{"train-travel.json", ""},   // OpenAPI 3.1, JSON
	{"github-rest.json", "GH_"}, // OpenAPI 3.0, 313 operations
}

// Every operation of each document imports as a row that is callable with
// typed arguments (POST /api/dispatch/{key}, the exported operations) and
// reaches the loopback upstream with the operation's method and path, its
// path parameters in their slots and every query parameter named; a second
// import of the same document changes nothing.
func TestImportEveryOperation(t *testing.T) {
	up := echo(t)
	for _, d := range documents {
		t.Run(d.file, func(t *testing.T) {
			doc, err := os.ReadFile("testdata/" + d.file)
			if err != nil {
				t.Fatal(err)
			}
			h := newHost(t)
			q := "prefix=" + d.prefix + "&server=" + url.QueryEscape(up)
			first := h.importDoc(doc, q)
			ops := operations(t, doc)
			if len(first.Created) != len(ops) || len(first.Skipped) != 0 || !first.StateChanged {
				t.Fatalf("created %d rows of %d operations; skipped %v", len(first.Created), len(ops), first.Skipped)
			}
			if d.file == "github-rest.json" && len(ops) < 300 {
				t.Fatalf("the large document has %d operations", len(ops))
			}
			for i, key := range first.Created {
				op := ops[i]
				var row rowcall.Row
				h.do("GET", "/api/directory/"+key, ownerKey, nil, &row)
				if !strings.HasPrefix(key, d.prefix) || row.Type != rowcall.TypeHTTP || len(row.Hygiene()) > 0 {
					t.Fatalf("%s: %+v", key, row)
				}
				if _, ok := typed.Named(row.InputSchema); !ok && strings.Contains(op.path, "{") {
					t.Fatalf("%s: input_schema %s takes no named arguments", key, row.InputSchema)
				}
				if want := op.method == "DELETE"; (row.Sensitive == 1) != want {
					t.Errorf("%s %s: sensitive %d", op.method, op.path, row.Sensitive)
				}
				args, text := arguments(t, row.InputSchema)
				var res dispatched
				if st := h.do("POST", "/api/dispatch/"+key, ownerKey, args, &res); st != 200 || !res.OK || !strings.HasPrefix(res.Result, "HTTP 200:") {
					t.Fatalf("%s %s (%s) with %s: HTTP %d %+v", op.method, op.path, key, args, st, res)
				}
				var got struct {
					Method, Path, Body string
					Query              map[string][]string
				}
				if err := json.Unmarshal([]byte(strings.TrimPrefix(res.Result, "HTTP 200:")), &got); err != nil {
					t.Fatal(err)
				}
				wantPath := regexpSlot(op.path, text)
				if got.Method != op.method || got.Path != wantPath {
					t.Fatalf("%s: reached %s %s, want %s %s", key, got.Method, got.Path, op.method, wantPath)
				}
				for _, name := range op.query {
					if _, ok := got.Query[name]; !ok {
						t.Fatalf("%s: query %v lacks %s", key, got.Query, name)
					}
				}
				if len(op.body) > 0 {
					var sent map[string]any
					if err := json.Unmarshal([]byte(got.Body), &sent); err != nil {
						t.Fatalf("%s: body %q: %v", key, got.Body, err)
					}
					var given map[string]any
					json.Unmarshal(args, &given)
					for _, name := range op.body { // each value as typed, a number as a number
						arg := name // a name a parameter took is body_<name>
						if slices.Contains(op.query, name) || strings.Contains(op.path, "{"+name+"}") {
							arg = "body_" + name
						}
						if v, ok := sent[name]; !ok || !jsonEqual(v, given[arg]) {
							t.Fatalf("%s: body %s has %s=%v, want %v", key, got.Body, name, v, given[arg])
						}
					}
				}
			}
			again := h.importDoc(doc, q)
			if len(again.Created) != 0 || len(again.Updated) != 0 || again.Unchanged != len(ops) || again.StateChanged {
				t.Fatalf("second import: %+v", again)
			}
		})
	}
}

// regexpSlot is path with each {name} replaced by its argument, path-escaped.
func regexpSlot(path string, text map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			return b.String() + path
		}
		j := strings.IndexByte(path[i:], '}') + i
		b.WriteString(path[:i] + url.PathEscape(text[path[i+1:j]]))
		path = path[j+1:]
	}
}

// A re-import updates only the operations that changed, and says which
// fields did.
func TestReimportUpdatesChanged(t *testing.T) {
	doc, _ := os.ReadFile("testdata/petstore.yaml")
	h := newHost(t)
	h.importDoc(doc, "server=http://127.0.0.1:1")
	edited := bytes.Replace(doc, []byte("summary: Finds Pets by status"), []byte("summary: Finds pets by their status"), 1)
	r := h.importDoc(edited, "server=http://127.0.0.1:1")
	if len(r.Created) != 0 || len(r.Updated) != 1 || r.Updated[0].Key != "FIND_PETS_BY_STATUS" || !slices.Equal(r.Updated[0].Fields, []string{"content"}) || r.Unchanged != 19 {
		t.Fatalf("%+v", r)
	}
	var row rowcall.Row
	h.do("GET", "/api/directory/FIND_PETS_BY_STATUS", ownerKey, nil, &row)
	if row.Description() != "Finds pets by their status" || row.Version != 2 {
		t.Fatalf("%q v%d", row.Description(), row.Version)
	}
	// A host without the converter (the worker) says where to convert.
	var none struct {
		Error    string
		HowToFix string `json:"how_to_fix"`
	}
	if st := newHostConverting(t, false).do("POST", "/api/import/openapi", ownerKey, doc, &none); st != 501 || !strings.Contains(none.HowToFix, "rowcall import openapi") {
		t.Fatalf("HTTP %d %+v", st, none)
	}
	// A bad document changes nothing and says why.
	var bad report
	if st := h.do("POST", "/api/import/openapi", ownerKey, []byte("openapi: 3.0.0\npaths: {/x: {get: {responses: {200: {$ref: '#/nowhere'}}}}}"), &bad); st != 400 || bad.Error != "invalid_request" {
		t.Fatalf("HTTP %d %+v", st, bad)
	}
}

// The exported document is valid OpenAPI 3.1 (kin-openapi's validator),
// importing it gives the same rows, and a scoped token's export holds its
// rows only.
func TestExportValidatesAndRoundTrips(t *testing.T) {
	up := echo(t)
	h := newHost(t)
	for _, d := range documents[:2] {
		doc, _ := os.ReadFile("testdata/" + d.file)
		h.importDoc(doc, "prefix="+d.prefix+"&server="+url.QueryEscape(up))
	}
	var export json.RawMessage
	if st := h.do("GET", "/api/openapi.json", ownerKey, nil, &export); st != 200 {
		t.Fatalf("HTTP %d %s", st, export)
	}
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(export)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(context.Background()); err != nil {
		t.Fatalf("the export is not valid OpenAPI: %v", err)
	}
	if !d.IsOpenAPI31OrLater() || d.Paths.Len() != 27 {
		t.Fatalf("openapi %s with %d paths", d.OpenAPI, d.Paths.Len())
	}

	// Imported with --trust-extensions and the rows' server into the same
	// host: nothing changes; into a fresh one: the same rows.
	own := "trust_extensions=1&server=" + url.QueryEscape(up)
	if r := h.importDoc(export, own); r.Unchanged != 27 || r.StateChanged {
		t.Fatalf("%+v", r)
	}
	other := newHost(t)
	if r := other.importDoc(export, own); len(r.Created) != 27 {
		t.Fatalf("%+v", r)
	}
	if a, b := registry(h), registry(other); a != b {
		t.Fatalf("the rows differ after a round trip:\n%s\n%s", a, b)
	}

	// A token scoped to one category sees the rows it may call only: with
	// the default risk ceiling not the sensitive DELETE, with "high" that too.
	for ceiling, want := range map[string][]string{
		"":     {"PET_GET_INVENTORY", "PET_GET_ORDER_BY_ID", "PET_PLACE_ORDER"},
		"high": {"PET_DELETE_ORDER", "PET_GET_INVENTORY", "PET_GET_ORDER_BY_ID", "PET_PLACE_ORDER"},
	} {
		var tok struct{ Token string }
		h.do("POST", "/api/tokens", ownerKey, []byte(`{"categories":["store"],"risk_ceiling":"`+ceiling+`"}`), &tok)
		var scoped struct {
			Paths map[string]map[string]struct {
				OperationID string `json:"operationId"`
			}
		}
		h.do("GET", "/api/openapi.json", tok.Token, nil, &scoped)
		var keys []string
		for _, item := range scoped.Paths {
			keys = append(keys, item["post"].OperationID)
		}
		sort.Strings(keys)
		if !slices.Equal(keys, want) {
			t.Fatalf("the store token's export (risk ceiling %q) has %v, want %v", ceiling, keys, want)
		}
	}
	var tok struct{ Token string }
	h.do("POST", "/api/tokens", ownerKey, []byte(`{"categories":["store"]}`), &tok)
	var missing struct{ Error string }
	if st := h.do("GET", "/api/openapi.json?keys=PET_ADD_PET", tok.Token, nil, &missing); st != 404 {
		t.Fatalf("a row outside the token's scope: HTTP %d %+v", st, missing)
	}
}

// registry is every row's writable fields, as one text.
func registry(h *host) string {
	var reg struct{ Rows []rowcall.Row }
	h.do("GET", "/api/dispatch?registry=1&all=1", ownerKey, nil, &reg)
	var b strings.Builder
	for _, r := range reg.Rows {
		r.UpdatedAt, r.CreatedAt, r.Version, r.RowNum = "", "", 0, 0
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// The tool lists are the tools arrays of the OpenAI Chat Completions API and
// of the Anthropic Messages API, for the rows asked for.
func TestToolLists(t *testing.T) {
	h := newHost(t)
	doc, _ := os.ReadFile("testdata/train-travel.json")
	h.importDoc(doc, "server=http://127.0.0.1:1")
	var row rowcall.Row
	h.do("GET", "/api/directory/GET_BOOKING", ownerKey, nil, &row)
	var params any
	json.Unmarshal([]byte(row.InputSchema), &params)
	desc := "Get a booking When to use: Returns the details of a specific booking."

	var openai []map[string]any
	h.do("GET", "/api/openapi.json?format=openai-tools&keys=GET_BOOKING,DELETE_BOOKING", ownerKey, nil, &openai)
	if len(openai) != 2 {
		t.Fatalf("%v", openai)
	}
	fn := map[string]any{"name": "GET_BOOKING", "description": desc, "parameters": params}
	if got := openai[1]; len(got) != 2 || got["type"] != "function" || !jsonEqual(got["function"], fn) {
		t.Fatalf("openai tool %v, want function %v", got, fn)
	}
	var anthropic []map[string]any
	h.do("GET", "/api/openapi.json?format=anthropic-tools&category=Bookings", ownerKey, nil, &anthropic)
	if len(anthropic) != 4 || !jsonEqual(anthropic[2], map[string]any{"name": "GET_BOOKING", "description": desc, "input_schema": params}) {
		t.Fatalf("anthropic tools %v", anthropic)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// BenchmarkImportGitHub is one import of the 313-operation document into a
// fresh host through POST /api/import/openapi: conversion, checks, 313
// guarded writes.
func BenchmarkImportGitHub(b *testing.B) {
	doc, err := os.ReadFile("testdata/github-rest.json")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		h := newHost(b)
		b.StartTimer()
		if r := h.importDoc(doc, "prefix=GH_&server=http://127.0.0.1:9"); len(r.Created) != 313 {
			b.Fatalf("%+v", r)
		}
	}
}

// BenchmarkConvertGitHub is the conversion alone (kin-openapi's parse and
// $ref resolution, then 313 rows).
func BenchmarkConvertGitHub(b *testing.B) {
	doc, err := os.ReadFile("testdata/github-rest.json")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if res, err := openapi.Convert(doc, openapi.Options{}); err != nil || len(res.Rows) != 313 {
			b.Fatal(err)
		}
	}
}

// lists is a document whose array parameters use each style rowcall writes.
const lists = `openapi: 3.0.3
info: {title: lists, version: "1"}
paths:
  /pets/{ids}:
    get:
      operationId: listPets
      parameters:
        - {name: ids, in: path, required: true, schema: {type: array, items: {type: integer}}}
        - {name: tags, in: query, explode: false, schema: {type: array, items: {type: string}}}
        - {name: pipe, in: query, style: pipeDelimited, schema: {type: array, items: {type: string}}}
        - {name: space, in: query, style: spaceDelimited, schema: {type: array, items: {type: string}}}
        - {name: "sort[]", in: query, schema: {type: array, items: {type: string}}}
        - {name: one, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
`

// An array parameter reaches the upstream as its style says, not as one
// JSON text: the Petstore's GET /pet/findByStatus (query, form, explode) with
// ["available","sold"] sends status=available&status=sold; not exploded the
// items are joined by ',', pipeDelimited by '|', spaceDelimited by ' ', and a
// path parameter by ','. The row's input_schema still says array, so an
// argument that is not one is refused before anything is sent.
func TestImportArrayParameters(t *testing.T) {
	var seen []string // each request's escaped path and raw query
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.EscapedPath()+"?"+r.URL.RawQuery)
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	saw := func() []string { // what the upstream saw since the last call, emptied
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
	t.Cleanup(srv.Close)
	h := newHost(t)
	pet, _ := os.ReadFile("testdata/petstore.yaml")
	h.importDoc(pet, "server="+url.QueryEscape(srv.URL))
	h.importDoc([]byte(lists), "server="+url.QueryEscape(srv.URL))

	var row rowcall.Row
	h.do("GET", "/api/directory/FIND_PETS_BY_STATUS", ownerKey, nil, &row)
	var schema struct {
		Properties map[string]struct {
			Type  any
			Items struct{ Type string }
		}
	}
	json.Unmarshal([]byte(row.InputSchema), &schema)
	if p := schema.Properties["status"]; p.Type != "array" || p.Items.Type != "string" {
		t.Fatalf("input_schema %s", row.InputSchema)
	}

	call := func(key, args string) dispatched {
		t.Helper()
		var res dispatched
		h.do("POST", "/api/dispatch/"+key, ownerKey, []byte(args), &res)
		return res
	}
	for _, c := range []struct{ key, args, want string }{
		{"FIND_PETS_BY_STATUS", `{"status":["available","sold"]}`, "/pet/findByStatus?status=available&status=sold"},
		{"FIND_PETS_BY_STATUS", `{"status":["pending"]}`, "/pet/findByStatus?status=pending"},
		{"FIND_PETS_BY_STATUS", `{"args":"[\"available\",\"sold\"]"}`, "/pet/findByStatus?status=available&status=sold"}, // positional
		{"LIST_PETS", `{"ids":[1,2],"tags":["a b","c,d"],"pipe":["x","y"],"space":["p","q"],"sort[]":["name","-age"],"one":"z"}`,
			"/pets/1,2?tags=a+b,c%2Cd&pipe=x%7Cy&space=p%20q&sort%5B%5D=name&sort%5B%5D=-age&one=z"},
		{"LIST_PETS", `{"ids":[7]}`, "/pets/7?tags=&pipe=&space=&sort%5B%5D=&one="},
	} {
		if res, seen := call(c.key, c.args), saw(); !res.OK || res.Result != "HTTP 200:ok" || len(seen) != 1 || seen[0] != c.want {
			t.Errorf("%s %s: %+v; the upstream saw %q, want %q", c.key, c.args, res, seen, c.want)
		}
	}
	var refused struct{ Error, Message string }
	if st, seen := h.do("POST", "/api/dispatch/FIND_PETS_BY_STATUS", ownerKey, []byte(`{"status":{"s":"sold"}}`), &refused), saw(); st != 400 || refused.Error != "invalid_arguments" || len(seen) != 0 {
		t.Fatalf("an object for an array: HTTP %d %+v; the upstream saw %q", st, refused, seen)
	}

	// A row written by hand, with no input_schema: a plain argument is one
	// value, and one the join cannot spread fails with bad_args, unsent.
	put := map[string]string{"key": "BY_STATUS", "type": "http", "target": "GET " + srv.URL + "/pet/findByStatus?status=$1[&status=]", "content": "# WHAT: Pets by status.\n# ARGS: $1=status, one or a JSON array\n# EX: [BY_STATUS]sold[/BY_STATUS]"}
	body, _ := json.Marshal(put)
	if st := h.do("POST", "/api/directory", ownerKey, body, nil); st != 201 {
		t.Fatalf("POST /api/directory: HTTP %d", st)
	}
	for _, c := range []struct{ args, result, want string }{
		{"sold", "HTTP 200:ok", "/pet/findByStatus?status=sold"},
		{`["available","sold"]`, "HTTP 200:ok", "/pet/findByStatus?status=available&status=sold"},
		{`{"s":"sold"}`, `ERR:http:bad_args:argument 1 is a JSON object; $1[&status=] takes a JSON array of strings, numbers or booleans, or one plain value`, ""},
		{`["sold",{"s":1}]`, `ERR:http:bad_args:argument 1 is a JSON array whose item 2 is an object; $1[&status=] takes a JSON array of strings, numbers or booleans, or one plain value`, ""},
	} {
		args, _ := json.Marshal(map[string]string{"args": c.args})
		res, seen := call("BY_STATUS", string(args)), saw()
		if res.Result != c.result || (c.want == "") != (len(seen) == 0) || c.want != "" && seen[0] != c.want {
			t.Errorf("BY_STATUS %s: %+v; the upstream saw %q, want %q", c.args, res, seen, c.want)
		}
	}
}
