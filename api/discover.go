package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/contract"
	"github.com/rowcall/rowcall/internal/dispatch"
)

// dispatchGet handles GET /api/dispatch: ?confirm=inv_… (public, keyless),
// ?key=K&format=markdown|brief|json (the contract document), ?key=K&run=1&body=…
// (the run-now URL), ?ask=<plain words>, ?registry=1.
func (h *Handler) dispatchGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Has("confirm"):
		h.confirm(w, r)
	case q.Has("key") && q.Get("run") == "1":
		h.invoker(h.runNow)(w, r)
	case q.Has("key"):
		h.reader(h.contractDoc)(w, r)
	case q.Has("ask"):
		h.reader(h.ask)(w, r)
	case q.Has("registry"):
		h.reader(h.registry)(w, r)
	default:
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "GET /api/dispatch needs one of ?confirm=, ?key=, ?ask=, ?registry=1",
			HowToFix: "to invoke a row, POST /api/dispatch {\"key\":…,\"body\":…}"})
	}
}

// visibleRow reads a row the caller may see (a token's scope hides the rest).
func (h *Handler) visibleRow(r *http.Request, c Caller, key string) (rowcall.Row, error) {
	if err := validKey(key); err != nil {
		return rowcall.Row{}, err
	}
	row, err := h.dir.Lookup(r.Context(), key)
	if err == nil && c.Token != nil && !c.Token.Covers(&row) {
		err = notFound(key)
	}
	return row, err
}

// contractDoc serves the contract document for one row.
func (h *Handler) contractDoc(w http.ResponseWriter, r *http.Request, c Caller) {
	row, err := h.visibleRow(r, c, r.URL.Query().Get("key"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	sum, err := h.disp.Contract(r.Context(), &row)
	if err != nil {
		writeError(w, r, err)
		return
	}
	doc := contract.Build(&row, sum, h.baseURL(r), contract.Viewer{Owner: c.Owner, Token: c.Token})
	switch f := r.URL.Query().Get("format"); f {
	case "", "markdown", "md":
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Write([]byte(doc.Markdown()))
	case "brief":
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Write([]byte(doc.Brief()))
	case "json":
		writeJSON(w, http.StatusOK, doc)
	default:
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "format must be markdown, brief or json; got " + f})
	}
}

// runNow handles GET /api/dispatch?key=K&run=1&body=…: the contract's run-now
// URL, the same call as the POST.
func (h *Handler) runNow(w http.ResponseWriter, r *http.Request, c Caller) {
	q := r.URL.Query()
	h.call(w, r, dispatch.Request{Key: q.Get("key"), Body: q.Get("body"), Principal: c})
}

// ask handles GET /api/dispatch?ask=<plain words>&limit=N: rows ranked for an
// intent by words and meaning (the directory's Search is internal/vectors.Ranker;
// score is its mix, higher is better), within what the caller may see, without
// those far below the best (SearchFilter.Near). Each match says how to call
// it: call is the POST /api/dispatch body of its first example.
func (h *Handler) ask(w http.ResponseWriter, r *http.Request, c Caller) {
	q := r.URL.Query()
	limit, err := queryInt(q.Get("limit"), "limit", 5, 1, 50)
	if err != nil {
		writeError(w, r, err)
		return
	}
	hits, err := h.dir.Search(r.Context(), q.Get("ask"), rowcall.SearchFilter{Scope: rowcall.ScopeOf(c.Token), Limit: limit, Near: true, For: c.Asker()})
	if err != nil {
		writeError(w, r, err)
		return
	}
	base := h.baseURL(r)
	matches := make([]ordered, 0, len(hits))
	for _, hit := range hits {
		row := hit.Row
		m := ordered{{"key", row.Key}, {"type", row.Type}, {"category", row.Category}, {"what", row.Description()}}
		if s := row.DocLine("WHEN_TO_USE"); s != "" {
			m = append(m, kv{"when_to_use", s})
		}
		if s := row.DocLine("ARGS"); s != "" {
			m = append(m, kv{"args", s})
		}
		m = append(m, kv{"call", ordered{{"key", row.Key}, {"body", contract.Example(&row)}}},
			kv{"contract", base + "/api/dispatch?key=" + row.Key + "&format=brief"}, kv{"score", math.Round(hit.Score*1000) / 1000})
		matches = append(matches, m)
	}
	writeJSON(w, http.StatusOK, ordered{{"ask", q.Get("ask")}, {"matches", matches}})
}

// registry handles GET /api/dispatch?registry=1: every row the caller may see
// (the owner adds &all=1 for disabled and hidden rows too) as one JSON
// document, with an ETag from the event log and gzip when accepted.
func (h *Handler) registry(w http.ResponseWriter, r *http.Request, c Caller) {
	all := c.Owner && r.URL.Query().Get("all") == "1"
	last, err := h.dir.LastEvent(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	scope := rowcall.ScopeOf(c.Token)
	sum := sha256.Sum256(fmt.Appendf(nil, "%d|%v|%v", last, all, scope))
	tag := `W/"reg-` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", tag)
	w.Header().Set("Vary", "Accept-Encoding, Authorization, X-Terminal-Key")
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	n, err := h.dir.CountRows(r.Context(), scope, all)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// Rows are written as they are read (arrayStream), the count first.
	out := newArrayStream(w, r, true, `{"count":`+strconv.Itoa(n)+`,"rows":[`)
	err = h.dir.EachRow(r.Context(), scope, all, func(row *rowcall.Row) error { return out.add(row) })
	if err == nil && out.n != n {
		err = fmt.Errorf("the directory changed while it was read: %d rows counted, %d read", n, out.n)
	}
	if err == nil {
		err = out.end("]}")
	}
	if err != nil {
		out.fail(r, err)
	}
}

// baseURL is this host's public base URL: the configured one, or the request's
// (see Config.PublicURL).
func (h *Handler) baseURL(r *http.Request) string {
	if h.cfg.PublicURL != "" {
		return strings.TrimRight(h.cfg.PublicURL, "/")
	}
	if h.cfg.ListenURL != "" && !h.cfg.TrustForwarded {
		return h.cfg.ListenURL
	}
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if h.cfg.TrustForwarded {
		// A proxy that appends to these headers puts its own value last.
		if p := lastValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if fh := lastValue(r.Header.Get("X-Forwarded-Host")); fh != "" && httpguts.ValidHostHeader(fh) {
			host = fh
		}
	}
	return scheme + "://" + host
}

// lastValue is the last entry of a comma-separated header value.
func lastValue(v string) string {
	return strings.TrimSpace(v[strings.LastIndexByte(v, ',')+1:])
}
