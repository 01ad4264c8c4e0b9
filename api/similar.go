package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/rowcall/rowcall"
)

// similarWait bounds how long a POST or PUT answer waits for the written
// row's vector (embedded beside the write, the short rowcall.EmbedText only)
// before it goes out with similar_pending instead of similar_rows.
const similarWait = 2 * time.Second

// similarCheck is a POST's or PUT's near-duplicate check, begun as soon as
// the row is parsed and passes the directory's rules: the row's vector is
// made (embedded, or the stored one when current) and its near rows found
// beside the write's transaction, so the answer waits for whichever ends
// last, not for both one after the other.
type similarCheck struct {
	row    rowcall.Row
	p      rowcall.PendingVector
	cancel context.CancelFunc
	done   chan struct{} // closed when hits and err are set
	hits   []rowcall.VectorHit
	err    error
}

// beginSimilar starts the check of row about to be written (nil: the host
// has no embedder, the request says ?similar=0, or the row breaks a rule and
// its write will be refused). A write that leaves the embedded text as it
// was finds its stored vector current and checks nothing more: nothing is
// embedded, no near rows are looked up, and its answer carries no
// similar_rows (each near pair is reported once, to the write that made it:
// the text's first write, or the later row's).
func (h *Handler) beginSimilar(r *http.Request, row *rowcall.Row) *similarCheck {
	if h.cfg.SimilarRows == nil || r.URL.Query().Get("similar") == "0" || h.dir.Check(row) != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), similarWait)
	c := &similarCheck{row: *row, p: h.cfg.SimilarRows(ctx, row), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		v, err := c.p.Vector(ctx)
		if err == nil && !c.p.Reused() {
			c.hits, err = h.cfg.Near(ctx, v, row.Key, rowcall.SearchFilter{}, 5, rowcall.NearDuplicate)
		}
		c.err = err
	}()
	return c
}

// answer is what the write's answer adds once the write ended (err): the
// rows the owner may see that mean nearly the same as out (cosine ≥
// rowcall.NearDuplicate), as similar_rows [{key, similarity}] (nothing when
// there are none); or, when the check did not end within similarWait,
// similar_pending, the address that lists the row's neighbours once its
// vector is made. Every check begun ends here (Pending.Keep stores the
// vector for the row committed), so the queue never waits on a write's
// embedding that nobody stores.
func (c *similarCheck) answer(out *rowcall.Row, err error) []kv {
	if c == nil {
		return nil
	}
	defer c.cancel()
	if err != nil {
		c.p.Keep(nil) // the write failed: store nothing
		return nil
	}
	kept := c.p.Keep(out)
	<-c.done // within similarWait: the check's context ends then
	if c.err == nil {
		<-kept // the vector is made: stored before the answer, so the next write sees it
	}
	if c.err != nil || !c.p.Embeds(out) {
		slog.Debug("api: similar_rows pending", "key", out.Key, "err", c.err)
		return []kv{{"similar_pending", "/api/directory/" + out.Key + "/similar"}}
	}
	if len(c.hits) == 0 {
		return nil
	}
	return []kv{{"similar_rows", similarList(c.hits)}}
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
	if h.cfg.SimilarRows == nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "this host does not embed rows, so it cannot tell which rows mean the same",
			HowToFix: "run the host with embeddings on (ROWCALL_EMBED_PROVIDER unset, use-lite or a model provider)"})
		return
	}
	p := h.cfg.SimilarRows(r.Context(), &row)
	kept := p.Keep(&row)
	v, err := p.Vector(r.Context())
	if err == nil {
		<-kept
	}
	var hits []rowcall.VectorHit
	if err == nil {
		hits, err = h.cfg.Near(r.Context(), v, row.Key, rowcall.SearchFilter{Scope: rowcall.ScopeOf(c.Token)}, limit, -1)
	}
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
