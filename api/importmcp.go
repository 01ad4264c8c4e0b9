package api

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

// MCPImportOptions are POST /api/import/mcp's query parameters.
type MCPImportOptions struct {
	Server, Prefix, Category, Auth string
}

// importMCP handles POST /api/import/mcp?server=URL|stdio:NAME&prefix=
// &category=&auth=&dry_run=1&replace=1 (owner only): the host lists the server's tools
// (with auth read from its own environment, through the outbound policy) and
// makes one row per tool (Config.MCPTools), checked, compared and written as
// POST /api/import?if_match=1 does: a re-import changes only the tools that
// changed and never overwrites a row edited meanwhile. The answer is import's,
// with "skipped" at the end.
func (h *Handler) importMCP(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.cfg.MCPTools == nil {
		writeError(w, r, notBuiltIn("import MCP servers", "import on a local host (`rowcall import mcp URL --url http://127.0.0.1:8080`), then `rowcall export` and `rowcall import` the rows here"))
		return
	}
	q := r.URL.Query()
	o := MCPImportOptions{Server: q.Get("server"), Prefix: q.Get("prefix"), Category: q.Get("category"), Auth: q.Get("auth")}
	if o.Server == "" {
		writeError(w, r, invalid("server is required", "add ?server=https://host/mcp or ?server=stdio:NAME"))
		return
	}
	rows, skipped, err := h.cfg.MCPTools(r.Context(), o)
	if err != nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Status: http.StatusBadGateway, Message: "listing the tools of " + o.Server + ": " + err.Error(),
			HowToFix: "check the server's URL (or its name in ROWCALL_MCP_SERVERS), that ROWCALL_ALLOW_OUTBOUND lets the host reach it, and the auth spec"})
		return
	}
	// Rows remember the server that made them, so a re-import never replaces
	// a row it did not make unless replace=1 (rowcall.ImportMayReplace).
	h.importConverted(w, r, rows, skipped, provenance{"mcp:" + o.Server, q.Get("replace") == "1"}, nil)
}

// syncMCP handles POST /api/mcp/sync[?server=URL|stdio:NAME|NAME]
// [&accept=KEY,…|*][&reject=KEY,…][&dry_run=1] (owner only): for every MCP
// server the rows call (or the one named), the host lists its tools and
// compares each row's recorded definition with the current one
// (Config.MCPSync). A changed definition marks the row drifted — its
// contract changes, so calls through tokens pinned to it stop with
// contract_changed — until the owner accepts (the row is defined again from
// the tool) or rejects (the row is disabled); a removed tool disables its
// row; a tool no row calls is reported new. Writes are guarded by the
// version read. The answer: {"servers":[{"server","changes":[…]}|{"server","error"}]}.
func (h *Handler) syncMCP(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.cfg.MCPSync == nil {
		writeError(w, r, notBuiltIn("sync MCP servers", "run `rowcall mcp sync` against a local host that shares the database"))
		return
	}
	q := r.URL.Query()
	rows, err := h.dir.AllRows(r.Context(), nil, true)
	if err != nil {
		writeError(w, r, err)
		return
	}
	byServer := map[string][]rowcall.Row{}
	var servers []string
	for _, row := range rows {
		t, err := mcpcall.ParseTarget(row.Target)
		if !strings.EqualFold(row.Runner, "mcp") || err != nil {
			continue
		}
		s := t.Server()
		if want := q.Get("server"); want != "" && want != s && "stdio:"+want != s {
			continue
		}
		if byServer[s] == nil {
			servers = append(servers, s)
		}
		byServer[s] = append(byServer[s], row)
	}
	sort.Strings(servers)
	listed := func(param string) func(string) bool {
		keys := strings.Split(q.Get(param), ",")
		return func(key string) bool {
			return slices.Contains(keys, key) || param == "accept" && slices.Contains(keys, "*")
		}
	}
	out := []ordered{}
	for _, s := range servers {
		writes, changes, err := h.cfg.MCPSync(r.Context(), s, byServer[s], listed("accept"), listed("reject"))
		if err != nil {
			out = append(out, ordered{{"server", s}, {"error", err.Error()}})
			continue
		}
		if q.Get("dry_run") != "1" {
			for _, row := range writes {
				if _, err := h.dir.Replace(r.Context(), row, row.Version); err != nil {
					writeError(w, r, err)
					return
				}
			}
		}
		out = append(out, ordered{{"server", s}, {"changes", changes}})
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"dry_run", q.Get("dry_run") == "1"}, {"servers", out}})
}

// notBuiltIn is the 501 of an endpoint whose converter this host's build
// leaves out (the worker: the OpenAPI parser).
func notBuiltIn(what, howToFix string) *rowcall.Error {
	return &rowcall.Error{Code: rowcall.EInvalid, Status: http.StatusNotImplemented,
		Message: "this host does not " + what + " (its build leaves that code out)", HowToFix: howToFix}
}
