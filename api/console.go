package api

import (
	"net/http"

	"github.com/rowcall/rowcall/api/console"
)

// consoleRoutes adds the web console (package console) at GET / and its
// files under /console/, and the one read it needs beyond the rest of the
// API: which rows use a module. Every other path stays "… is not part of the
// API".
func (h *Handler) consoleRoutes(m *router) {
	m.HandleFunc("GET /{$}", console.Index)
	m.HandleFunc("GET /console/", console.Assets)
	m.HandleFunc("GET /api/modules/{name}/rows", h.reader(h.moduleRows))
}

// moduleRows handles GET /api/modules/{name}/rows: {"name","rows":[keys]},
// the fn rows whose target names the module (the owner's view: a token sees
// only the keys in its scope).
func (h *Handler) moduleRows(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.noModules(w, r) {
		return
	}
	name := r.PathValue("name")
	if _, err := h.cfg.Modules.Get(r.Context(), name); err != nil {
		writeError(w, r, err)
		return
	}
	users, err := h.dir.ModuleUsers(r.Context(), name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	keys := []string{}
	for _, k := range users {
		if c.Token != nil {
			if row, err := h.dir.Lookup(r.Context(), k); err != nil || !c.Token.Covers(&row) {
				continue
			}
		}
		keys = append(keys, k)
	}
	writeJSON(w, http.StatusOK, ordered{{"name", name}, {"rows", keys}})
}
