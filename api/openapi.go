package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/typed"
	"github.com/rowcall/rowcall/runners/agent"
)

// OpenAPIOptions are POST /api/import/openapi's query parameters, as
// internal/openapi.Options takes them: prefix, category, auth, server,
// trust_extensions=1, allow_origins=A,B, allow_types=T,U, allow_owner_auth=1.
type OpenAPIOptions struct {
	Prefix, Category, Auth, Server string
	TrustExtensions                bool
	AllowOrigins, AllowTypes       []string
	AllowOwnerAuth                 bool
}

// OpenAPIResult is a converted document: its rows, the operations skipped
// (each "METHOD path: why"), the server its rows target and the import id
// they record (rowcall.ImportMayReplace).
type OpenAPIResult struct {
	Rows           []rowcall.Row
	Skipped        []string
	Server, Source string
}

// MaxOpenAPIDocument is the largest document POST /api/import/openapi reads
// (the API's body limit).
const MaxOpenAPIDocument = 4 << 20

// importOpenAPI handles POST /api/import/openapi?prefix=&category=&auth=
// &server=&dry_run=1&replace=1 (and the x-rowcall options of OpenAPIOptions)
// with an OpenAPI 3.0/3.1 document (JSON or YAML) as the body: one http row
// per operation (Config.OpenAPI converts), checked, compared and written as
// POST /api/import?if_match=1&source= does, so a re-import changes only the
// operations that changed, never overwrites a row edited meanwhile, and never
// replaces a row this import did not make unless replace=1. The answer is
// import's (with "source" and "rows": each row's key, action, type, origin
// and auth), then "server" and "skipped" (operations that could not become
// rows).
func (h *Handler) importOpenAPI(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.cfg.OpenAPI == nil {
		writeError(w, r, notBuiltIn("convert OpenAPI documents", "run `rowcall import openapi FILE --url URL`, which converts the document on your machine and imports the rows"))
		return
	}
	doc, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxOpenAPIDocument))
	if err != nil {
		writeError(w, r, tooLarge("the document"))
		return
	}
	q := r.URL.Query()
	res, err := h.cfg.OpenAPI(doc, OpenAPIOptions{Prefix: q.Get("prefix"), Category: q.Get("category"), Auth: q.Get("auth"), Server: q.Get("server"),
		TrustExtensions: q.Get("trust_extensions") == "1", AllowOrigins: strings.Split(q.Get("allow_origins"), ","), AllowTypes: strings.Split(q.Get("allow_types"), ","),
		AllowOwnerAuth: q.Get("allow_owner_auth") == "1"})
	if err != nil {
		writeError(w, r, invalid(err.Error(), "send an OpenAPI 3.0 or 3.1 document, JSON or YAML, whose $refs point inside it"))
		return
	}
	h.importConverted(w, r, res.Rows, res.Skipped, provenance{res.Source, q.Get("replace") == "1"}, ordered{{"server", res.Server}})
}

// importConverted imports rows an importer made (OpenAPI operations, MCP
// tools) from one source as POST /api/import?if_match=1&source= does,
// honouring ?dry_run=1, with extra and then skipped (what could not become a
// row, and why) at the end of the answer.
func (h *Handler) importConverted(w http.ResponseWriter, r *http.Request, rows []rowcall.Row, skipped []string, from provenance, extra ordered) {
	raw := make([]map[string]json.RawMessage, len(rows))
	for i := range rows {
		b, _ := json.Marshal(rows[i])
		json.Unmarshal(b, &raw[i])
	}
	if skipped == nil {
		skipped = []string{}
	}
	h.importBatch(w, r, raw, r.URL.Query().Get("dry_run") == "1", true, from, append(extra, ordered{{"skipped", skipped}}...))
}

// callNamed handles POST /api/dispatch/{key} with the call's named arguments
// as a JSON object ({"args":"a|b"} for a row without a typed input_schema):
// the operations of GET /api/openapi.json. The arguments become the pipe body
// by typed.Body, and the call and its answer are POST /api/dispatch's.
func (h *Handler) callNamed(w http.ResponseWriter, r *http.Request, c Caller) {
	row, err := h.visibleRow(r, c, r.PathValue("key"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	var args json.RawMessage
	if err := readJSON(r, &args); err != nil {
		writeError(w, r, err)
		return
	}
	body, err := typed.Body(row.InputSchema, args)
	if err != nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalidArguments, Message: err.Error(),
			HowToFix: "send the arguments GET /api/openapi.json declares for " + row.Key + "; nothing ran"})
		return
	}
	h.call(w, r, dispatch.Request{Key: row.Key, Body: body, Principal: c})
}

// exportOpenAPI handles GET /api/openapi.json[?keys=A,B][&category=C]
// [&format=openai-tools|anthropic-tools]: the rows the caller may call (a
// token sees its scope; the owner adds &all=1 for disabled and hidden rows)
// as an OpenAPI 3.1 document with one operation per row, POST
// /api/dispatch/{key} typed from its input_schema and carrying the row
// itself in x-rowcall (so importing the document gives the same rows); or as
// the tools array of the OpenAI Chat Completions API
// ({"type":"function","function":{"name","description","parameters"}}) or of
// the Anthropic Messages API ({"name","description","input_schema"}).
func (h *Handler) exportOpenAPI(w http.ResponseWriter, r *http.Request, c Caller) {
	q := r.URL.Query()
	format := q.Get("format")
	if format != "" && format != "openapi" && format != "openai-tools" && format != "anthropic-tools" {
		writeError(w, r, invalid("format must be openapi (the default), openai-tools or anthropic-tools; got "+format, "leave format out for the OpenAPI document"))
		return
	}
	rows, err := h.dir.AllRows(r.Context(), rowcall.ScopeOf(c.Token), c.Owner && q.Get("all") == "1")
	if err != nil {
		writeError(w, r, err)
		return
	}
	var want map[string]bool
	if k := q.Get("keys"); k != "" {
		want = map[string]bool{}
		for _, key := range strings.Split(k, ",") {
			want[strings.TrimSpace(key)] = true
		}
	}
	cat, tools := q.Get("category"), strings.HasSuffix(format, "-tools")
	var picked []rowcall.Row
	for _, row := range rows {
		if (want != nil && !want[row.Key]) || (cat != "" && row.Category != cat) || (c.Token != nil && !c.Token.MayCall(&row)) {
			continue
		}
		if tools && !agent.ToolName(row.Key) {
			if want != nil {
				writeError(w, r, invalid("key "+row.Key+" cannot be a tool's name (^[a-zA-Z0-9_-]{1,64}$)", "leave it out of keys, or call it by tag"))
				return
			}
			continue
		}
		delete(want, row.Key)
		picked = append(picked, row)
	}
	for key := range want { // asked for, but not there for this caller
		writeError(w, r, notFound(key))
		return
	}
	switch format {
	case "openai-tools", "anthropic-tools":
		list := make([]ordered, 0, len(picked))
		for i := range picked {
			name, desc, params := agent.FunctionTool(&picked[i])
			if format == "openai-tools" {
				list = append(list, ordered{{"type", "function"}, {"function", ordered{{"name", name}, {"description", desc}, {"parameters", params}}}})
			} else {
				list = append(list, ordered{{"name", name}, {"description", desc}, {"input_schema", params}})
			}
		}
		writeJSON(w, http.StatusOK, list)
	default:
		writeJSON(w, http.StatusOK, h.openAPIDocument(r, picked))
	}
}

// openAPIDocument is rows as an OpenAPI 3.1 document.
func (h *Handler) openAPIDocument(r *http.Request, rows []rowcall.Row) ordered {
	errorRef := ordered{{"$ref", "#/components/schemas/Error"}}
	errorAnswer := func(what string) ordered {
		return ordered{{"description", what}, {"content", ordered{{"application/json", ordered{{"schema", errorRef}}}}}}
	}
	paths := make(ordered, 0, len(rows))
	for i := range rows {
		row := &rows[i]
		_, desc, params := agent.FunctionTool(row)
		op := ordered{{"operationId", row.Key}, {"summary", row.Description()}, {"description", desc}}
		if row.Category != "" {
			op = append(op, kv{"tags", []string{row.Category}})
		}
		op = append(op,
			kv{"requestBody", ordered{{"required", true}, {"content", ordered{{"application/json", ordered{{"schema", params}}}}}}},
			kv{"responses", ordered{
				{"200", ordered{{"description", "the call's result (an ERR: result is a runner's failure) and its receipt"},
					{"content", ordered{{"application/json", ordered{{"schema", ordered{{"$ref", "#/components/schemas/Result"}}}}}}}}},
				{"400", errorAnswer("the arguments do not fit the row's input_schema; nothing ran")},
				{"401", errorAnswer("no credential, or one this host does not know")},
				{"403", errorAnswer("the token's gate refused the call (its literal reason is the error)")},
				{"404", errorAnswer("no such row for this caller")},
			}},
			kv{"x-rowcall", exportedRow(row)})
		paths = append(paths, kv{"/api/dispatch/" + row.Key, ordered{{"post", op}}})
	}
	str := ordered{{"type", "string"}}
	return ordered{
		{"openapi", "3.1.0"},
		{"info", ordered{{"title", "rowcall directory"}, {"version", "1"},
			{"description", "Each operation calls one row of this host's directory with typed arguments and answers its result and signed receipt."}}},
		{"servers", []ordered{{{"url", h.baseURL(r)}}}},
		{"security", []ordered{{{"bearer", []string{}}}}},
		{"paths", paths},
		{"components", ordered{
			{"securitySchemes", ordered{{"bearer", ordered{{"type", "http"}, {"scheme", "bearer"},
				{"description", "the owner key, or a capability token (rct_…)"}}}}},
			{"schemas", ordered{
				{"Result", ordered{{"type", "object"}, {"required", []string{"ok", "ran", "trace", "result", "proof"}}, {"properties", ordered{
					{"ok", ordered{{"type", "boolean"}}}, {"ran", ordered{{"type", "boolean"}}}, {"trace", str}, {"result", str},
					{"proof", ordered{{"type", "object"}, {"properties", ordered{{"ok", ordered{{"type", "boolean"}}}, {"invocation_id", str},
						{"public_receipt", str}, {"contract_sha256", str}}}}}}}}},
				{"Error", ordered{{"type", "object"}, {"required", []string{"error"}}, {"properties", ordered{
					{"error", str}, {"message", str}, {"how_to_fix", str}}}}},
			}},
		}},
	}
}

// exportedRow is a row's writable fields, as an import takes them back.
func exportedRow(r *rowcall.Row) ordered {
	row := ordered{{"key", r.Key}, {"type", string(r.Type)}, {"target", r.Target}, {"auth", r.Auth}, {"content", r.Content},
		{"category", r.Category}, {"allowed_categories", r.AllowedCategories}, {"seq", r.Seq}, {"enabled", r.Enabled},
		{"planner_visible", r.PlannerVisible}, {"planner_rank", r.PlannerRank}, {"input_schema", r.InputSchema},
		{"examples", r.Examples}, {"sensitive", r.Sensitive}, {"runner", r.Runner}, {"includes", r.Includes},
		{"approval", r.Approval}}
	if r.OutputSchema != "" { // a row without one exports as it did before the column
		row = append(row, kv{"output_schema", r.OutputSchema})
	}
	return row
}
