package api

import (
	"net/http"
	"strings"

	"github.com/rowcall/rowcall"
)

// listLearned handles GET /api/learned[?key=K]: ask's learned phrases
// (internal/learn), newest first, each with the receipt of the call that
// taught it.
func (h *Handler) listLearned(w http.ResponseWriter, r *http.Request, c Caller) {
	ps, err := h.cfg.Learned.Phrases(r.Context(), r.URL.Query().Get("key"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if ps == nil {
		ps = []rowcall.Phrase{}
	}
	writeJSON(w, http.StatusOK, ordered{{"phrases", ps}})
}

// learnedEdit is the body of POST and PATCH /api/learned.
type learnedEdit struct {
	Key      string  `json:"key"`
	Scope    string  `json:"scope"`
	Phrase   *string `json:"phrase"`
	Approved *bool   `json:"approved"`
}

// phraseText is a phrase as ask would take it as a question.
func phraseText(p *string) (string, error) {
	text := strings.Join(strings.Fields(*p), " ")
	if text == "" {
		return "", invalid("phrase is empty", `send the question a user would ask, e.g. {"phrase":"refund a payment"}`)
	}
	return text, rowcall.CheckAsk(text)
}

// addLearned handles POST /api/learned {"key","phrase"[,"scope"]}: the
// owner's own phrase for a row, approved (scope "*", the whole directory,
// unless given: a token's learn.ScopeID as GET /api/learned shows it).
func (h *Handler) addLearned(w http.ResponseWriter, r *http.Request, c Caller) {
	var e learnedEdit
	if err := readJSON(r, &e); err != nil {
		writeError(w, r, err)
		return
	}
	if e.Phrase == nil {
		writeError(w, r, invalid("phrase is missing", `send {"key":"NOW","phrase":"what time is it"}`))
		return
	}
	text, err := phraseText(e.Phrase)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := h.dir.Lookup(r.Context(), e.Key); err != nil {
		writeError(w, r, err)
		return
	}
	if e.Scope == "" {
		e.Scope = "*"
	}
	p := rowcall.Phrase{Key: e.Key, Scope: e.Scope, Text: text, Source: rowcall.SourceOwner, Approved: true, Actor: c.Actor}
	if err := h.cfg.Learned.Teach(r.Context(), p); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, ordered{{"ok", true}, {"key", p.Key}, {"phrase", p.Text}, {"scope", p.Scope}})
}

// editLearned handles PATCH /api/learned/{id} {"phrase"?, "approved"?}: the
// owner rewrites a phrase (embedded again) or approves it (kept whatever
// its age or the row's cap).
func (h *Handler) editLearned(w http.ResponseWriter, r *http.Request, c Caller) {
	var e learnedEdit
	if err := readJSON(r, &e); err != nil {
		writeError(w, r, err)
		return
	}
	if e.Phrase != nil {
		text, err := phraseText(e.Phrase)
		if err != nil {
			writeError(w, r, err)
			return
		}
		e.Phrase = &text
	}
	if e.Phrase == nil && e.Approved == nil {
		writeError(w, r, invalid("nothing to change", `send {"approved":true} or {"phrase":"…"}`))
		return
	}
	if err := h.cfg.Learned.Edit(r.Context(), r.PathValue("id"), e.Phrase, e.Approved); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"id", r.PathValue("id")}})
}

// deleteLearned handles DELETE /api/learned/{id}.
func (h *Handler) deleteLearned(w http.ResponseWriter, r *http.Request, c Caller) {
	if err := h.cfg.Learned.Forget(r.Context(), r.PathValue("id")); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"id", r.PathValue("id")}})
}
