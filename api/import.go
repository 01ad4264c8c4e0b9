package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/rowcall/rowcall"
)

// MaxImportBatch is the most rows one import request may carry; the CLI sends
// a large file as a run of such batches.
const MaxImportBatch = 1000

// importRows handles POST /api/import[?dry_run=1][&if_match=1][&source=S
// [&replace=1]] {"rows":[…]}:
// every row is checked as a PUT would check it (types, sizes, key rule,
// hygiene), compared with what is stored, and — unless it is a dry run, and
// only when no row is invalid — written in batches under D1's limits. With
// if_match=1 each row is written on its own instead, guarded by the version it
// was compared with (a create by the key being free), so a row edited
// meanwhile is refused with version_conflict (key_exists), not overwritten.
// With source (an import id, what `rowcall import openapi` sends) the rows
// written remember it and none replaces a row another import or the owner
// made unless replace=1 (rowcall.ImportMayReplace); without replace=1 those
// writes are always guarded, as with if_match=1, so the row whose provenance
// was checked is the row replaced. The answer says what was
// (or would be) created, updated and left unchanged.
func (h *Handler) importRows(w http.ResponseWriter, r *http.Request, c Caller) {
	obj, err := readObject(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(obj["rows"], &raw); err != nil || raw == nil {
		writeError(w, r, invalid(`the body must be {"rows":[…]} with rows as GET /api/directory/{key} returns them`, "export with `rowcall export`, edit, import"))
		return
	}
	if len(raw) > MaxImportBatch {
		writeError(w, r, invalid(fmt.Sprintf("%d rows in one request; at most %d", len(raw), MaxImportBatch), "send batches; `rowcall import` does"))
		return
	}
	q := r.URL.Query()
	h.importBatch(w, r, raw, q.Get("dry_run") == "1", q.Get("if_match") == "1", importFrom(q), nil)
}

// provenance is which import writes a batch: its id (source, "" for a plain
// registry import, which claims nothing) and whether it may replace rows it
// did not make.
type provenance struct {
	source  string
	replace bool
}

// importFrom reads source= and replace=1.
func importFrom(q url.Values) provenance {
	return provenance{source: q.Get("source"), replace: q.Get("replace") == "1"}
}

// importBatch checks, compares and (unless dry) writes rows given as JSON
// objects, and answers what changed; extra fields go at the end of the answer.
// With a source, each row written records it, a stored row that another
// import made is refused (rowcall.ImportMayReplace: nothing is written) unless
// the provenance allows replacing, and the answer lists every row's key,
// action, type, origin and auth ("rows").
func (h *Handler) importBatch(w http.ResponseWriter, r *http.Request, raw []map[string]json.RawMessage, dry, guarded bool, from provenance, extra ordered) {
	type problem struct {
		Index int    `json:"index"`
		Key   string `json:"key"`
		Error string `json:"error"`
	}
	var rows []rowcall.Row
	var keys []string
	var at []int // each row's index in raw
	invalidRows := []problem{}
	seen := map[string]bool{}
	for i, o := range raw {
		var key string
		json.Unmarshal(o["key"], &key)
		if err := validKey(key); err != nil {
			invalidRows = append(invalidRows, problem{i, key, err.Error()})
			continue
		}
		if seen[key] {
			invalidRows = append(invalidRows, problem{i, key, "the key appears twice in this batch"})
			continue
		}
		seen[key] = true
		row, err := h.rowFrom(key, o)
		row.ImportedFrom = from.source
		if err == nil {
			err = h.dir.Check(&row) // reported row by row; Import checks again before it writes
		}
		if err != nil {
			invalidRows = append(invalidRows, problem{i, key, err.Error()})
			continue
		}
		rows, keys, at = append(rows, row), append(keys, key), append(at, i)
	}
	stored, err := h.dir.RowsByKey(r.Context(), keys)
	if err != nil {
		writeError(w, r, err)
		return
	}
	created, updated, listed := []string{}, []ordered{}, []ordered{}
	var write []rowcall.Row
	for i, row := range rows {
		old, ok := stored[row.Key]
		action := "unchanged"
		if !ok {
			action, created, write = "create", append(created, row.Key), append(write, row)
		} else if fields := changed(&old, &row); len(fields) > 0 {
			if err := rowcall.ImportMayReplace(&old, from.source, from.replace); err != nil {
				invalidRows = append(invalidRows, problem{at[i], row.Key, err.Error()})
				continue
			}
			row.Version = old.Version // the version a guarded write expects
			action, updated, write = "update", append(updated, ordered{{"key", row.Key}, {"fields", fields}}), append(write, row)
		}
		listed = append(listed, ordered{{"key", row.Key}, {"action", action}, {"type", row.Type}, {"origin", row.Origin()}, {"auth", row.Auth}})
	}
	if from.source != "" {
		extra = append(ordered{{"source", from.source}, {"rows", listed}}, extra...)
	}
	// The provenance was checked on the rows read: only a write guarded by
	// what was read keeps that check true when the write lands.
	guarded = guarded || from.source != "" && !from.replace
	status := http.StatusOK
	switch {
	case len(invalidRows) > 0:
		status = http.StatusUnprocessableEntity
	case !dry && guarded:
		for _, row := range write {
			var err error
			if row.Version == 0 {
				_, err = h.dir.Create(r.Context(), row)
			} else {
				_, err = h.dir.Replace(r.Context(), row, row.Version)
			}
			if err != nil {
				writeError(w, r, err)
				return
			}
		}
	case !dry:
		if err := h.dir.Import(r.Context(), write); err != nil {
			writeError(w, r, err)
			return
		}
	}
	writeJSON(w, status, append(ordered{{"ok", len(invalidRows) == 0}, {"dry_run", dry}, {"state_changed", !dry && len(invalidRows) == 0 && len(write) > 0},
		{"created", created}, {"updated", updated}, {"unchanged", len(rows) - len(write)}, {"invalid", invalidRows}}, extra...))
}

// changed names the writable fields that differ between two rows.
func changed(a, b *rowcall.Row) []string {
	var f []string
	pairs := []struct {
		name string
		x, y any
	}{
		{"type", a.Type, b.Type}, {"target", a.Target, b.Target}, {"auth", a.Auth, b.Auth}, {"content", a.Content, b.Content},
		{"category", a.Category, b.Category}, {"allowed_categories", a.AllowedCategories, b.AllowedCategories},
		{"seq", seqText(a.Seq), seqText(b.Seq)}, {"enabled", a.Enabled, b.Enabled}, {"planner_visible", a.PlannerVisible, b.PlannerVisible},
		{"planner_rank", a.PlannerRank, b.PlannerRank}, {"input_schema", a.InputSchema, b.InputSchema}, {"examples", a.Examples, b.Examples},
		{"sensitive", a.Sensitive, b.Sensitive}, {"runner", a.Runner, b.Runner}, {"includes", a.Includes, b.Includes},
		{"approval", a.Approval, b.Approval},
		{"output_schema", a.OutputSchema, b.OutputSchema},
	}
	for _, p := range pairs {
		if p.x != p.y {
			f = append(f, p.name)
		}
	}
	return f
}

func seqText(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
