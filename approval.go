package rowcall

// Approval is one call that waits for a person: the exact call it stands for
// (the row's key and contract, the SHA-256 of the arguments, the calling
// credential) and what became of it. An approved one lets that call run
// once, until ExpiresAt.
type Approval struct {
	ID        string `json:"id"` // apr_…
	Key       string `json:"key"`
	Contract  string `json:"contract_sha256"`
	Input     string `json:"input_sha256"`
	Caller    string `json:"caller"`           // the calling credential: a token's id, or "owner"
	Actor     string `json:"actor"`            // as on the call's receipts
	Person    string `json:"person,omitempty"` // the person (per_…) behind the caller, who never decides it
	Why       string `json:"why"`              // what asked for it: "row", "token:sensitive", "token:all"
	Shape     any    `json:"shape,omitempty"`
	Status    string `json:"status"` // pending, approved, denied, expired, used
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
	DecidedAt string `json:"decided_at,omitempty"`
	DecidedBy string `json:"decided_by,omitempty"` // the approver's actor
	Reason    string `json:"reason,omitempty"`
	UsedBy    string `json:"used_by,omitempty"` // the invocation that ran on it
}

// The statuses of an Approval.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
	ApprovalUsed     = "used"
)

// The token's approval modes (Token.Approval).
const (
	ApproveSensitive = "sensitive" // calls of sensitive rows wait for approval
	ApproveAll       = "all"       // every call waits for approval
)

// ApprovalWhy says why a call of row with tok (nil: the owner) needs a
// person's approval: "row" (the row's approval column), "token:all" or
// "token:sensitive" (the token's approval mode); "" when it does not.
func ApprovalWhy(r *Row, tok *Token) string {
	switch {
	case r.Approval != 0:
		return "row"
	case tok == nil:
		return ""
	case tok.Approval == ApproveAll:
		return "token:all"
	case tok.Approval == ApproveSensitive && r.Sensitive != 0:
		return "token:sensitive"
	}
	return ""
}

// CallerOf names the calling credential an approval is bound to: the token's
// id, or "owner".
func CallerOf(tok *Token) string {
	if tok == nil {
		return "owner"
	}
	return tok.ID
}

// The approval codes. approval_required:<id> is a call that did not run and
// waits (HTTP 202); the others refuse a call that named an approval.
const (
	EApprovalRequired Code = "approval_required"  // the new approval's id
	EApprovalPending  Code = "approval_pending"   // the id: not decided yet
	EApprovalDenied   Code = "approval_denied"    // the id
	EApprovalExpired  Code = "approval_expired"   // the id
	EApprovalUsed     Code = "approval_used"      // the id: it already let one call run
	EApprovalMismatch Code = "approval_mismatch"  // the id, then what differs: key, contract, input or caller
	EApprovalUnknown  Code = "approval_unknown"   // the id
	EApproveForbidden Code = "approve_forbidden"  // the approver's actor: may not decide this approval
	EApprovalDecided  Code = "approval_decided"   // the id, then its status: decided already
	ETooManyApprovals Code = "too_many_approvals" // the cap: the caller has that many approvals waiting already
)
