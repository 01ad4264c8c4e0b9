package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
)

// ApprovalHeader names, on a call that does not carry it in its JSON body
// (POST /api/dispatch/{key}, GET …&run=1), the approval it runs on.
const ApprovalHeader = "Rowcall-Approval"

// call dispatches req for c and answers it: a call that waits for approval
// is 202 approval_required:<id> with where to approve it; with the header
// Prefer: wait=N (seconds, at most dispatch.MaxWait) the call waits up to N
// seconds for the decision and runs the moment it is approved.
func (h *Handler) call(w http.ResponseWriter, r *http.Request, req dispatch.Request) {
	if req.Approval == "" {
		req.Approval = r.Header.Get(ApprovalHeader)
	}
	res, err := h.disp.Dispatch(r.Context(), req)
	if wait, ok := preferWait(r); ok && rowcall.ErrorCode(err) == rowcall.EApprovalRequired {
		w.Header().Set("Preference-Applied", "wait="+strconv.Itoa(int(wait/time.Second)))
		var e *rowcall.Error
		errors.As(err, &e)
		a, werr := h.disp.Await(r.Context(), e.Args[0], wait)
		switch {
		case werr != nil:
			err = werr
		case a.Status != rowcall.ApprovalPending: // approved: it runs; denied or expired: the call says so
			req.Approval = a.ID
			res, err = h.disp.Dispatch(r.Context(), req)
		}
	}
	if err != nil {
		h.approvalLinks(r, err)
		writeError(w, r, err)
		return
	}
	h.answer(w, r, res, req.Shape)
}

// preferWait reads Prefer: wait=N (RFC 7240), bounded by dispatch.MaxWait.
func preferWait(r *http.Request) (time.Duration, bool) {
	for _, v := range r.Header.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(name), "wait") {
				n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(val), `"`))
				if err != nil || n <= 0 {
					return 0, false
				}
				return min(time.Duration(n)*time.Second, dispatch.MaxWait), true
			}
		}
	}
	return 0, false
}

// approvalLinks adds to an approval_required refusal where to approve it:
// approve_url (the console) and approval_url (the API).
func (h *Handler) approvalLinks(r *http.Request, err error) {
	var e *rowcall.Error
	if !errors.As(err, &e) || e.Code != rowcall.EApprovalRequired {
		return
	}
	base := h.baseURL(r)
	e.Extra["approve_url"] = base + "/#/approvals/" + e.Args[0]
	e.Extra["approval_url"] = base + "/api/approvals/" + e.Args[0]
	e.HowToFix = "a person approves it at " + base + "/#/approvals/" + e.Args[0] + " — " + e.HowToFix
}

// approver is c as the dispatcher's Approver.
func approver(c Caller) dispatch.Approver {
	return c
}

// listApprovals handles GET /api/approvals: the calls waiting for a decision
// that the caller may decide (the owner: all; a token with the approve
// right: those of rows in its scope, never its own).
func (h *Handler) listApprovals(w http.ResponseWriter, r *http.Request, c Caller) {
	list, err := h.disp.Pending(r.Context(), approver(c))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"approvals", list}})
}

// getApproval handles GET /api/approvals/{id}: for whoever may decide it,
// and for the credential whose call it is.
func (h *Handler) getApproval(w http.ResponseWriter, r *http.Request, c Caller) {
	a, err := h.disp.Approval(r.Context(), r.PathValue("id"))
	if err == nil && !h.disp.May(r.Context(), approver(c), a) && (rowcall.CallerOf(c.Token) != a.Caller || c.Token != nil && !h.usable(c.Token)) {
		err = &rowcall.Error{Code: rowcall.EApprovalUnknown, Args: []string{a.ID}, Message: "no approval " + a.ID + " that this credential may see",
			HowToFix: "ask with the credential that made the call, the owner key, or a token with the approve right"}
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// decideRequest is the optional body of POST /api/approvals/{id}/approve|deny.
type decideRequest struct {
	Reason    string `json:"reason"`
	ExpiresIn int64  `json:"expires_in"` // seconds the approval may be used (approve only)
}

// decide handles POST /api/approvals/{id}/approve and …/deny.
func (h *Handler) decide(approve bool) func(http.ResponseWriter, *http.Request, Caller) {
	return func(w http.ResponseWriter, r *http.Request, c Caller) {
		var req decideRequest
		if r.ContentLength != 0 {
			if err := readJSON(r, &req); err != nil {
				writeError(w, r, err)
				return
			}
		}
		if req.ExpiresIn < 0 || time.Duration(req.ExpiresIn)*time.Second > dispatch.MaxApprovalValid || len(req.Reason) > 2000 {
			writeError(w, r, invalid("expires_in is 1 to 86400 seconds and reason at most 2000 bytes", `send e.g. {"reason":"checked the recipient","expires_in":600}`))
			return
		}
		a, receipt, err := h.disp.Decide(r.Context(), r.PathValue("id"), approver(c),
			dispatch.Decision{Approve: approve, Reason: req.Reason, ValidFor: time.Duration(req.ExpiresIn) * time.Second})
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"approval", a}, {"invocation_id", receipt},
			{"public_receipt", h.receiptURL(r, receipt)}})
	}
}
