package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

// createRow handles POST /api/directory: key and type required; 201 with
// {"ok":true,"key":…,"updated_at":…}; 409 when the key exists.
func (h *Handler) createRow(w http.ResponseWriter, r *http.Request, c Caller) {
	obj, err := readObject(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var key string
	if raw, ok := obj["key"]; !ok || json.Unmarshal(raw, &key) != nil || key == "" {
		writeError(w, r, missing("key"))
		return
	}
	if err := validKey(key); err != nil {
		writeError(w, r, err)
		return
	}
	if _, ok := obj["type"]; !ok {
		writeError(w, r, missing("type"))
		return
	}
	row, err := h.rowFrom(key, obj)
	if err != nil {
		writeError(w, r, err)
		return
	}
	check := h.beginSimilar(r, &row)
	out, err := h.dir.Create(r.Context(), row)
	more := check.answer(&out, err)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(out.Version))
	w.Header().Set("Location", h.basePath(r)+"/api/directory/"+out.Key) // a tenant's rows are under its path
	writeJSON(w, http.StatusCreated, append(ordered{{"ok", true}, {"key", out.Key}, {"updated_at", out.UpdatedAt}}, more...))
}

// rowFrom builds a whole row (defaults for absent fields) from a POST or PUT
// body; the directory's write path checks it (the hygiene gate, the auth check).
func (h *Handler) rowFrom(key string, obj map[string]json.RawMessage) (rowcall.Row, error) {
	if raw, ok := obj["key"]; ok {
		var k string
		if json.Unmarshal(raw, &k) != nil || k != key {
			return rowcall.Row{}, &rowcall.Error{Code: rowcall.EInvalid, Message: "the body's key " + clip(raw) + " differs from the key in the path, " + key,
				HowToFix: "a row's key cannot change: create a new row and delete the old one", Extra: map[string]any{"field": "key"}}
		}
	}
	row := rowcall.NewRow(key, "")
	_, unknown, err := apply(&row, obj, true)
	if err != nil {
		return row, err
	}
	if len(unknown) > 0 {
		return row, unknownFields(unknown)
	}
	if row.Type == "" {
		return row, missing("type")
	}
	if rowSize(&row) > MaxValue {
		return row, tooLarge("the row")
	}
	return row, nil
}

// getRow handles GET /api/directory/{key}: the row with row_num and version, and
// its ETag.
func (h *Handler) getRow(w http.ResponseWriter, r *http.Request, c Caller) {
	key := r.PathValue("key")
	if err := validKey(key); err != nil {
		writeError(w, r, err)
		return
	}
	row, err := h.dir.Get(r.Context(), key)
	if err == nil && c.Token != nil && !c.Token.Covers(&row) {
		err = notFound(key) // outside the token's scope, a row does not exist
	}
	if st := h.mcpSyncOf(row, c); st != nil && err == nil {
		versioned(w, r, row.Version, struct {
			rowcall.Row
			MCPSync *MCPSyncStatus `json:"mcp_sync"`
		}{row, st}, nil)
		return
	}
	versioned(w, r, row.Version, row, err)
}

// mcpSyncOf is, for the owner, the last sync of the MCP server row calls
// (nil for another row, another caller, or before a sync).
func (h *Handler) mcpSyncOf(row rowcall.Row, c Caller) *MCPSyncStatus {
	if !c.Owner || !strings.EqualFold(row.Runner, "mcp") {
		return nil
	}
	t, err := mcpcall.ParseTarget(row.Target)
	if err != nil {
		return nil
	}
	return h.syncs.get(t.Server())
}

// listRows handles GET /api/directory?type=&category=&enabled=&limit=&offset=.
func (h *Handler) listRows(w http.ResponseWriter, r *http.Request, c Caller) {
	q := r.URL.Query()
	f := rowcall.Filter{Type: rowcall.Type(q.Get("type")), Category: q.Get("category")}
	f.Scope = rowcall.ScopeOf(c.Token)
	if f.Type != "" && !f.Type.Valid() {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "type must be one of fn, http, agent, flow; got " + q.Get("type")})
		return
	}
	var err error
	if v := q.Get("enabled"); v != "" {
		var n int64
		if n, err = parseFlag(v); err != nil {
			writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "enabled must be 0 or 1; got " + v})
			return
		}
		f.Enabled = &n
	}
	if f.Limit, err = queryInt(q.Get("limit"), "limit", rowcall.DefaultPage, 1, rowcall.MaxPage); err == nil {
		f.Offset, err = queryInt(q.Get("offset"), "offset", 0, 0, 1<<31)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	page, err := h.dir.List(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var next any
	if f.Offset+len(page.Rows) < page.Total {
		next = f.Offset + len(page.Rows)
	}
	writeJSON(w, http.StatusOK, ordered{{"rows", page.Rows}, {"total", page.Total}, {"limit", f.Limit}, {"offset", f.Offset}, {"next_offset", next}})
}

// replaceRow handles PUT /api/directory/{key}: a full replace, refused when the
// result is non-compliant.
func (h *Handler) replaceRow(w http.ResponseWriter, r *http.Request, c Caller) {
	key, ver, obj, err := h.writeRequest(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	row, err := h.rowFrom(key, obj)
	if err != nil {
		writeError(w, r, err)
		return
	}
	check := h.beginSimilar(r, &row)
	out, err := h.dir.Replace(r.Context(), row, ver)
	h.written(w, r, out, err, check.answer(&out, err)...)
}

// patchRow handles PATCH /api/directory/{key}: the named writable fields are
// merged into the row. The hygiene gate refuses only a patch that makes the row
// violate a rule it did not already violate, so old rows stay editable.
func (h *Handler) patchRow(w http.ResponseWriter, r *http.Request, c Caller) {
	key, ver, obj, err := h.writeRequest(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	probe := rowcall.NewRow(key, rowcall.TypeFn)
	known, unknown, err := apply(&probe, obj, false)
	switch {
	case err != nil:
		writeError(w, r, err)
		return
	case known == 0:
		writeError(w, r, &rowcall.Error{Code: rowcall.ENoFields, Message: "none of the fields sent can be written: " + strings.Join(unknown, ", "),
			HowToFix: "PATCH accepts: " + writableNames, Extra: map[string]any{"unknown_fields": orEmpty(unknown)}})
		return
	case len(unknown) > 0:
		writeError(w, r, unknownFields(unknown))
		return
	}
	// The directory merges against the current version; without If-Match, a
	// concurrent edit makes it read and merge again rather than lose it.
	out, err := h.dir.Patch(r.Context(), key, ver, func(next *rowcall.Row) error {
		apply(next, obj, false)
		if rowSize(next) > MaxValue {
			return tooLarge("the row")
		}
		return nil
	})
	h.written(w, r, out, err)
}

// deleteRow handles DELETE /api/directory/{key}.
func (h *Handler) deleteRow(w http.ResponseWriter, r *http.Request, c Caller) {
	key := r.PathValue("key")
	ver, err := h.preWrite(r, key)
	if err == nil {
		err = h.dir.Delete(r.Context(), key, ver)
	}
	if err != nil {
		h.written(w, r, rowcall.Row{}, err)
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"key", key}, {"deleted", 1}})
}

// history handles GET /api/directory/{key}/history: the row's versions from the
// event log, oldest first, kept after the row is deleted.
func (h *Handler) history(w http.ResponseWriter, r *http.Request, c Caller) {
	key := r.PathValue("key")
	if err := validKey(key); err != nil {
		writeError(w, r, err)
		return
	}
	ev, err := h.dir.History(r.Context(), key)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if c.Token != nil {
		if row, err := h.dir.Lookup(r.Context(), key); err != nil || !c.Token.Covers(&row) {
			ev = nil
		}
	}
	if len(ev) == 0 {
		writeError(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: "no row with key " + key + " has ever existed",
			HowToFix: "check the key; GET /api/directory lists rows"})
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"key", key}, {"events", ev}})
}

// writeRequest reads a PUT or PATCH: the path key (checked), If-Match, and
// the JSON object body.
func (h *Handler) writeRequest(r *http.Request) (key string, ver int64, obj map[string]json.RawMessage, err error) {
	key = r.PathValue("key")
	if ver, err = h.preWrite(r, key); err == nil {
		obj, err = readObject(r)
	}
	return key, ver, obj, err
}

// preWrite validates the path key and reads If-Match.
func (h *Handler) preWrite(r *http.Request, key string) (int64, error) {
	if err := validKey(key); err != nil {
		return 0, err
	}
	return ifMatch(r)
}

// written answers a PUT/PATCH/DELETE; a version conflict carries the current
// ETag so the caller can retry.
func (h *Handler) written(w http.ResponseWriter, r *http.Request, out rowcall.Row, err error, more ...kv) {
	if err != nil {
		var e *rowcall.Error
		if asErr(err, &e) && e.Code == rowcall.EVersionConflict {
			if v, ok := e.Extra["current_version"].(int64); ok {
				w.Header().Set("ETag", etag(v))
			}
		}
		writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(out.Version))
	writeJSON(w, http.StatusOK, append(ordered{{"ok", true}, {"key", out.Key}, {"updated_at", out.UpdatedAt}, {"version", out.Version}}, more...))
}

func notFound(key string) error {
	return &rowcall.Error{Code: rowcall.ENotFound, Message: "no row with key " + key,
		HowToFix: "check the key (GET /api/directory lists rows), or create it with POST /api/directory", Extra: map[string]any{"key": key}}
}

func missing(field string) error {
	return &rowcall.Error{Code: rowcall.EInvalid, Message: field + " is required",
		HowToFix: `send at least {"key":"MY_KEY","type":"http"} (type is one of fn, http, agent, flow) plus content`,
		Extra:    map[string]any{"field": field}}
}

func unknownFields(names []string) error {
	return &rowcall.Error{Code: rowcall.EUnknownFields, Message: "unknown fields: " + strings.Join(names, ", "),
		HowToFix: "remove them; writable fields are: " + writableNames, Extra: map[string]any{"unknown_fields": names}}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func parseFlag(v string) (int64, error) {
	switch v {
	case "0", "false":
		return 0, nil
	case "1", "true":
		return 1, nil
	}
	return 0, strconv.ErrSyntax
}

func queryInt(v, name string, def, lo, hi int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, &rowcall.Error{Code: rowcall.EInvalid, Message: name + " must be an integer from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi) + "; got " + v}
	}
	return n, nil
}
