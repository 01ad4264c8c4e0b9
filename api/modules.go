package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/modules"
)

func (h *Handler) noModules(w http.ResponseWriter, r *http.Request) bool {
	if h.cfg.Modules != nil {
		return false
	}
	writeError(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: "this host has no module registry", Status: http.StatusNotImplemented})
	return true
}

// putModule handles PUT /api/modules/{name}: the body is the Wasm bytes,
// compiled and checked before it is accepted. If-Match guards a replacement.
func (h *Handler) putModule(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.noModules(w, r) {
		return
	}
	ver, err := ifMatch(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, modules.MaxSize+1))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) || len(body) > modules.MaxSize {
		writeError(w, r, &rowcall.Error{Code: rowcall.ETooLarge, Message: fmt.Sprintf("a module is at most %d bytes", modules.MaxSize),
			HowToFix: "build it smaller (strip debug sections; TinyGo, C or AssemblyScript build small modules)"})
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	var m modules.Module
	if ver > 0 {
		m, err = h.cfg.Modules.PutIf(r.Context(), r.PathValue("name"), body, ver)
	} else {
		m, err = h.cfg.Modules.Put(r.Context(), r.PathValue("name"), body)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	h.dir.Changed()
	w.Header().Set("ETag", etag(m.Version))
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"name", m.Name}, {"digest", m.Digest}, {"size", m.Size},
		{"version", m.Version}, {"ref", m.Ref()}})
}

func (h *Handler) listModules(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.noModules(w, r) {
		return
	}
	list, err := h.cfg.Modules.List(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"modules", list}})
}

func (h *Handler) getModule(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.noModules(w, r) {
		return
	}
	m, err := h.cfg.Modules.Get(r.Context(), r.PathValue("name"))
	versioned(w, r, m.Version, m, err)
}

// deleteModule handles DELETE /api/modules/{name}, refused while fn rows use it.
func (h *Handler) deleteModule(w http.ResponseWriter, r *http.Request, c Caller) {
	if h.noModules(w, r) {
		return
	}
	name := r.PathValue("name")
	users, err := h.dir.ModuleUsers(r.Context(), name)
	if err == nil {
		err = h.cfg.Modules.Delete(r.Context(), name, users)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	h.dir.Changed()
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"name", name}, {"deleted", 1}})
}
