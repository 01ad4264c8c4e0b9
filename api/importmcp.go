package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

// MCPImportOptions are POST /api/import/mcp's query parameters.
type MCPImportOptions struct {
	Server, Prefix, Category, Auth string
	Tool                           string // only this tool's row ("": every tool's)
}

// importMCP handles POST /api/import/mcp?server=URL|stdio:NAME&prefix=
// &category=&auth=&tool=&dry_run=1&replace=1 (owner only): the host lists the server's tools
// (with auth read from its own environment, through the outbound policy) and
// makes one row per tool (Config.MCPTools), checked, compared and written as
// POST /api/import?if_match=1 does: a re-import changes only the tools that
// changed and never overwrites a row edited meanwhile. The answer is import's,
// with "skipped" at the end. Without auth, a server that asks for a person's
// sign-in gets the host registered as its client and its rows the auth
// bearer:connection:NAME; until the owner has signed in, the answer is 409
// connection_required:NAME with the connect_url to open, and the import is
// made again after (docs/mcp.md).
func (h *Handler) importMCP(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.cfg.MCPTools == nil {
		writeError(w, r, notBuiltIn("import MCP servers", "import on a local host (`rowcall import mcp URL --url http://127.0.0.1:8080`), then `rowcall export` and `rowcall import` the rows here"))
		return
	}
	q := r.URL.Query()
	o := MCPImportOptions{Server: q.Get("server"), Prefix: q.Get("prefix"), Category: q.Get("category"), Auth: q.Get("auth"), Tool: q.Get("tool")}
	if o.Server == "" {
		writeError(w, r, invalid("server is required", "add ?server=https://host/mcp or ?server=stdio:NAME"))
		return
	}
	rows, skipped, err := h.cfg.MCPTools(r.Context(), o)
	if e := (*rowcall.Error)(nil); errors.As(err, &e) { // connection_required: a person signs in at connect_url first
		writeError(w, r, e)
		return
	}
	if err != nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Status: http.StatusBadGateway, Message: "listing the tools of " + o.Server + ": " + err.Error(),
			HowToFix: "check the server's URL (or its name in ROWCALL_MCP_SERVERS), that ROWCALL_ALLOW_OUTBOUND lets the host reach it, and the auth spec"})
		return
	}
	if o.Tool != "" { // one tool: the one a sync offered
		rows = slices.DeleteFunc(rows, func(row rowcall.Row) bool { return !strings.HasSuffix(row.Target, "#"+o.Tool) })
		if len(rows) == 0 {
			writeError(w, r, &rowcall.Error{Code: rowcall.ENotFound, Status: http.StatusNotFound, Message: o.Server + " lists no tool " + strconv.Quote(o.Tool) + " that can be a row",
				HowToFix: "run `rowcall mcp sync " + o.Server + "` to see the tools it offers, or import without tool= to see why a tool was skipped"})
			return
		}
	}
	// Rows remember the server that made them, so a re-import never replaces
	// a row it did not make unless replace=1 (rowcall.ImportMayReplace).
	h.importConverted(w, r, rows, skipped, provenance{"mcp:" + o.Server, q.Get("replace") == "1"}, nil)
}

// syncMCP handles POST /api/mcp/sync[?server=URL|stdio:NAME|NAME]
// [&accept=KEY,…|*][&reject=KEY,…][&dry_run=1] (owner only): SyncMCP for
// every MCP server the rows call (or the one named). A changed definition
// marks the row drifted — its contract changes, so calls through tokens
// pinned to it stop with contract_changed — until the owner accepts (the row
// is defined again from the tool) or rejects (the row keeps the approved
// definition and its calls are refused while the server lists another); a
// removed tool disables its row; a tool no row calls is reported new, with
// the import query that makes its row. The answer:
// {"servers":[{"server","changes":[…]}|{"server","error"}]}.
func (h *Handler) syncMCP(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.cfg.MCPSync == nil {
		writeError(w, r, notBuiltIn("sync MCP servers", "run `rowcall mcp sync` against a local host that shares the database"))
		return
	}
	q := r.URL.Query()
	listed := func(param string) func(string) bool {
		keys := strings.Split(q.Get(param), ",")
		return func(key string) bool {
			return slices.Contains(keys, key) || param == "accept" && slices.Contains(keys, "*")
		}
	}
	results, err := h.SyncMCP(r.Context(), q.Get("server"), listed("accept"), listed("reject"), q.Get("dry_run") == "1")
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := []ordered{}
	for _, res := range results {
		if res.Err != nil {
			out = append(out, ordered{{"server", res.Server}, {"error", res.Err.Error()}})
			continue
		}
		out = append(out, ordered{{"server", res.Server}, {"changes", res.Changes}})
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"dry_run", q.Get("dry_run") == "1"}, {"servers", out}})
}

// MCPSyncResult is one server's sync: its changes (Config.MCPSync's), or
// why its tools could not be listed.
type MCPSyncResult struct {
	Server  string
	Changes any
	Err     error
}

// SyncMCP compares the tools of server (a URL, stdio:NAME or NAME; "" for
// every server the rows call) with the rows that call them
// (Config.MCPSync) and, unless dry, stores what the comparison changed,
// each write guarded by the version read. It is the one path of `rowcall
// mcp sync` and of the host's background checks; only accept and reject
// decide a change. Each server's outcome is kept (MCPSyncStatuses): a server
// whose tools cannot be listed shows why on its rows, never silently. err is
// a failure to read or write the directory.
func (h *Handler) SyncMCP(ctx context.Context, server string, accept, reject func(key string) bool, dry bool) ([]MCPSyncResult, error) {
	servers, byServer, err := h.mcpRows(ctx, server)
	if err != nil {
		return nil, err
	}
	var out []MCPSyncResult
	for _, s := range servers {
		writes, changes, err := h.cfg.MCPSync(ctx, s, byServer[s], accept, reject)
		h.syncs.record(s, time.Now(), err)
		if err != nil {
			out = append(out, MCPSyncResult{Server: s, Err: err})
			continue
		}
		if !dry {
			for _, row := range writes {
				if _, err := h.dir.Replace(ctx, row, row.Version); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, MCPSyncResult{Server: s, Changes: changes})
	}
	return out, nil
}

// CheckMCP is the drift check that runs with no one asking: the host's
// background checks (each server that sent tools/list_changed, and every
// server every --mcp-sync-every) and the worker's Cron Trigger. It is SyncMCP
// of server ("" for every server the rows call), accepting and rejecting
// nothing, so a changed tool's row is marked drifted, and held, until the
// owner decides; the rows it writes name the host as their writer
// (rowcall.WriterMCPSync). err joins why each server's tools could not be
// listed (each also kept in MCPSyncStatuses), or is the directory's failure.
func (h *Handler) CheckMCP(ctx context.Context, server string) error {
	never := func(string) bool { return false }
	results, err := h.SyncMCP(rowcall.WithWriter(ctx, rowcall.WriterMCPSync), server, never, never, false)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return errors.Join(errs...)
}

// MCPServers lists the MCP servers the rows call, as their targets write
// them, sorted.
func (h *Handler) MCPServers(ctx context.Context) ([]string, error) {
	servers, _, err := h.mcpRows(ctx, "")
	return servers, err
}

// mcpRows groups the rows whose runner is mcp by the server they call (only
// want's, unless "").
func (h *Handler) mcpRows(ctx context.Context, want string) ([]string, map[string][]rowcall.Row, error) {
	rows, err := h.dir.AllRows(ctx, nil, true)
	if err != nil {
		return nil, nil, err
	}
	byServer := map[string][]rowcall.Row{}
	var servers []string
	for _, row := range rows {
		t, err := mcpcall.ParseTarget(row.Target)
		if !strings.EqualFold(row.Runner, "mcp") || err != nil {
			continue
		}
		s := t.Server()
		if want != "" && want != s && "stdio:"+want != s {
			continue
		}
		if byServer[s] == nil {
			servers = append(servers, s)
		}
		byServer[s] = append(byServer[s], row)
	}
	sort.Strings(servers)
	return servers, byServer, nil
}

// notBuiltIn is the 501 of an endpoint whose converter this host's build
// leaves out (the worker: the OpenAPI parser).
func notBuiltIn(what, howToFix string) *rowcall.Error {
	return &rowcall.Error{Code: rowcall.EInvalid, Status: http.StatusNotImplemented,
		Message: "this host does not " + what + " (its build leaves that code out)", HowToFix: howToFix}
}
