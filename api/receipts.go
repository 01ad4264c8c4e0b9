package api

import (
	"net/http"

	"github.com/rowcall/rowcall/ledger"
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
	list, err := h.store.Receipts(r.Context(), int64(after), limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var next any
	if len(list) == limit {
		next = list[len(list)-1].Seq
	}
	writeJSON(w, http.StatusOK, ordered{{"receipts", list}, {"next_after", next}})
}

// receiptKeys handles GET /.well-known/rowcall-receipt-keys: the public keys
// that verify this host's receipts, public and keyless.
func (h *Handler) receiptKeys(w http.ResponseWriter, r *http.Request) {
	keys := h.cfg.ReceiptKeys
	if keys == nil {
		keys = []ledger.PublicKey{}
	}
	writeJSON(w, http.StatusOK, ordered{{"keys", keys}})
}
