package api

import (
	"net/http"

	"github.com/rowcall/rowcall"
)

// MCPImportOptions are POST /api/import/mcp's query parameters.
type MCPImportOptions struct {
	Server, Prefix, Category, Auth string
}

// importMCP handles POST /api/import/mcp?server=URL|stdio:NAME&prefix=
// &category=&auth=&dry_run=1 (owner only): the host lists the server's tools
// (with auth read from its own environment, through the outbound policy) and
// makes one row per tool (Config.MCPTools), checked, compared and written as
// POST /api/import?if_match=1 does: a re-import changes only the tools that
// changed and never overwrites a row edited meanwhile. The answer is import's,
// with "skipped" at the end.
func (h *Handler) importMCP(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.cfg.MCPTools == nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Status: http.StatusNotImplemented,
			Message:  "this host does not import MCP servers (the worker leaves the importer out of its build)",
			HowToFix: "import on a local host (`rowcall import mcp URL --url http://127.0.0.1:8080`), then `rowcall export` and `rowcall import` the rows here"})
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
	// The import's provenance (which import made a row, so a re-import never
	// replaces a row it did not make) plugs in here, as for OpenAPI: these
	// rows' source is "mcp:"+o.Server.
	h.importConverted(w, r, rows, skipped)
}
