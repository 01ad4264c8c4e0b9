package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
)

// exportReceipts handles GET /api/receipts?after=SEQ&limit=N: the signed chain
// in order, for `rowcall receipt verify` to check offline; and
// GET /api/receipts?trace=t_…: every receipt of one call and its nested calls.
func (h *Handler) exportReceipts(w http.ResponseWriter, r *http.Request, c Caller) {
	q := r.URL.Query()
	if trace := q.Get("trace"); trace != "" {
		list, err := h.store.Trace(r.Context(), trace)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, ordered{{"trace", trace}, {"receipts", list}})
		return
	}
	after, err := queryInt(q.Get("after"), "after", 0, 0, 1<<62)
	if err != nil {
		writeError(w, r, err)
		return
	}
	limit, err := queryInt(q.Get("limit"), "limit", 1000, 1, 10000)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// Receipts are written as they are read (arrayStream).
	out := newArrayStream(w, r, false, `{"receipts":[`)
	var last int64
	err = h.store.EachReceipt(r.Context(), int64(after), limit, func(rc *rowcall.Receipt) error {
		last = rc.Seq
		return out.add(rc)
	})
	next := "null"
	if out.n == limit {
		next = strconv.FormatInt(last, 10)
	}
	if err == nil {
		err = out.end(`],"next_after":` + next + "}")
	}
	if err != nil {
		out.fail(r, err)
	}
}

// receiptKeys handles GET /.well-known/rowcall-receipt-keys: the public keys
// that verify this host's receipts, public and keyless.
func (h *Handler) receiptKeys(w http.ResponseWriter, r *http.Request) {
	keys, _ := h.keys()
	writeJSON(w, http.StatusOK, ordered{{"keys", keys}})
}

// checkpoint handles GET /.well-known/rowcall-checkpoint: the chain's newest
// receipt (seq and sha256), signed with the receipt key as a C2SP checkpoint
// (text/plain, see ledger.Checkpoint), public and keyless. Save one to catch a
// later chain that was cut short or rewritten: `rowcall receipt verify
// --checkpoint`.
func (h *Handler) checkpoint(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Signer == nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: "this host signs no checkpoints: it has no receipt signing key"})
		return
	}
	seq, head, err := h.store.ChainHead(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	signed, err := h.cfg.Signer.SignCheckpoint(ledger.Checkpoint{Origin: h.origin(), Size: seq, Head: head})
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(signed)
}

// origin names this host's receipt chain in its checkpoints: its public URL
// without the scheme, or its token audience when no public URL is set, then
// "/receipts" (e.g. rowcall.example.com/receipts).
func (h *Handler) origin() string { return h.Origin() }

// Origin is the chain's name in this host's checkpoints (its sealed
// segments' too).
func (h *Handler) Origin() string {
	base := h.disp.Audience
	if h.cfg.PublicURL != "" {
		base = strings.TrimRight(h.cfg.PublicURL, "/")
		if _, rest, ok := strings.Cut(base, "://"); ok {
			base = rest
		}
	}
	return base + "/receipts"
}
