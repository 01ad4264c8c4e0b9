package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/vectors"
)

// similarWait bounds how long a POST or PUT answer waits for the written
// row's embedding (embedded at once, the short rowcall.EmbedText only) before
// it goes out without similar_rows.
const similarWait = 2 * time.Second

// similarRows is what a POST or PUT answer adds for the row written: the
// rows the owner may see that mean nearly the same (cosine ≥
// vectors.Duplicate), as [{key, similarity}], or nil when there are none, the
// host has no embedder, or the request says ?similar=0 (a writer that wants
// its answer without waiting for the row's embedding, 10–25 ms with the
// embedded encoder; docs/benchmarks.md).
func (h *Handler) similarRows(r *http.Request, row *rowcall.Row) []ordered {
	if h.cfg.Similar == nil || r.URL.Query().Get("similar") == "0" {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), similarWait)
	defer cancel()
	hits, err := h.cfg.Similar(ctx, row, rowcall.SearchFilter{}, 5, vectors.Duplicate)
	if err != nil {
		slog.Debug("api: no similar_rows", "key", row.Key, "err", err)
		return nil
	}
	return similarList(hits)
}

func similarList(hits []rowcall.VectorHit) []ordered {
	var out []ordered
	for _, h := range hits {
		out = append(out, ordered{{"key", h.Key}, {"similarity", round3(h.Cosine)}})
	}
	return out
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5*sign(x))) / 1000 }

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}

// similar handles GET /api/directory/{key}/similar?limit=N: the rows nearest
// the row by meaning (cosine of their embeddings), best first, among those
// the caller may see (a token's scope; enabled and planner-visible rows, as
// ask shows), each with its similarity.
func (h *Handler) similar(w http.ResponseWriter, r *http.Request, c Caller) {
	limit, err := queryInt(r.URL.Query().Get("limit"), "limit", 5, 1, 50)
	if err != nil {
		writeError(w, r, err)
		return
	}
	row, err := h.visibleRow(r, c, r.PathValue("key"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if h.cfg.Similar == nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "this host does not embed rows, so it cannot tell which rows mean the same",
			HowToFix: "run the host with embeddings on (ROWCALL_EMBED_PROVIDER unset, use-lite or a model provider)"})
		return
	}
	hits, err := h.cfg.Similar(r.Context(), &row, rowcall.SearchFilter{Scope: rowcall.ScopeOf(c.Token)}, limit, -1)
	if err != nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInternal, Message: "the row's embedding is not available yet: " + err.Error(),
			HowToFix: "try again in a moment; the host embeds rows in the background"})
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"key", row.Key}, {"similar", orEmptyList(similarList(hits))}})
}

func orEmptyList(l []ordered) []ordered {
	if l == nil {
		return []ordered{}
	}
	return l
}
