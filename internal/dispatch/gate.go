package dispatch

import (
	"fmt"
	"net/http"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/typed"
)

// gate decides, before any runner, whether the call may run. For a token it
// checks, in the seed's order: revocation (and expiry), audience, the owner
// gate (then that every block the row includes is in the token's scope:
// include_out_of_scope:<BLOCK>), the contract pin, the risk ceiling, the fixed body and the payload
// ceiling — the last two only for the caller's own (top-level) call. Scope is
// settled before the gate: a row outside the token's scope does not exist for
// it (unknown_key), for reads and calls alike, nested calls included.
// Then, for every caller, the arguments against the row's input_schema. A
// refusal's code is the literal reason; its Status is the HTTP status.
func (d *Dispatcher) gate(tok *rowcall.Token, l *looked, inv *rowcall.Invocation, top bool, now time.Time) *rowcall.Error {
	row := inv.Row
	if tok != nil {
		if e := d.tokenGate(tok, l, inv.Body, top, now); e != nil {
			return e
		}
	}
	if row.InputSchema == "" {
		return nil
	}
	s, err := typed.Compile(row.InputSchema)
	if err != nil {
		return refuse(http.StatusUnprocessableEntity, "invalid_input_schema:"+row.Key, err.Error(),
			"fix the row's input_schema with PATCH /api/directory/"+row.Key)
	}
	if err := s.Check(inv.Args); err != nil {
		return refuse(http.StatusBadRequest, "invalid_arguments", err.Error(),
			"the arguments are mapped, in order, onto input_schema's properties; GET /api/directory/"+row.Key+" shows them")
	}
	return nil
}

func (d *Dispatcher) tokenGate(tok *rowcall.Token, l *looked, body string, top bool, now time.Time) *rowcall.Error {
	row, contract := &l.row, l.contract
	switch state := tok.State(now); {
	case state == rowcall.TokenRevoked:
		return refuse(http.StatusUnauthorized, "token_revoked:"+tok.ID, "this token was revoked at "+tok.RevokedAt, "ask the owner for a new token")
	case state == rowcall.TokenExpired:
		return refuse(http.StatusUnauthorized, "token_expired:"+tok.ExpiresAt, "this token expired at "+tok.ExpiresAt, "ask the owner for a new token")
	case tok.Audience != "*" && tok.Audience != d.Audience:
		return refuse(http.StatusForbidden, "audience_mismatch:"+tok.Audience+"!="+d.Audience,
			"this token was minted for the audience "+tok.Audience+", not this host ("+d.Audience+")", "use a token minted by this host")
	case row.OwnerOnly():
		return refuse(http.StatusForbidden, "owner_only:"+row.Key, row.Key+" acts with the owner's key ("+rowcall.OwnerEnv+"), so only the owner may call it",
			"call it with the owner key")
	}
	for i := range l.blocks {
		if b := &l.blocks[i]; b.Enabled != 0 && !tok.Covers(b) {
			return refuse(http.StatusForbidden, "include_out_of_scope:"+b.Key,
				row.Key+" sends the text of "+b.Key+" (its includes), which this token may not read",
				"ask the owner for a token whose scope covers "+b.Key+", or call a row that does not include it")
		}
	}
	if pinned, ok := tok.Pins[row.Key]; ok && pinned != contract {
		return refuse(http.StatusConflict, "contract_changed:"+pinned+"!="+contract,
			row.Key+"'s callable contract changed since the token was pinned to it", "mint a fresh token against the new contract")
	}
	if row.Sensitive != 0 && tok.RiskCeiling != rowcall.RiskHigh {
		return refuse(http.StatusForbidden, "risk_ceiling:"+tok.RiskCeiling+"<row:high",
			row.Key+" is sensitive and the token's risk ceiling is "+tok.RiskCeiling, "mint a token with the higher ceiling; the row is not the problem")
	}
	if !top {
		return nil
	}
	if tok.FixedBody != nil && body != *tok.FixedBody {
		return refuse(http.StatusForbidden, "fixed_body:mismatch", "this token may only send its fixed body", "send exactly the body the token was minted with")
	}
	if tok.MaxPayload > 0 && int64(len(body)) > tok.MaxPayload {
		return refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("payload_ceiling:%d>%d", len(body), tok.MaxPayload),
			fmt.Sprintf("the body is %d bytes; this token allows at most %d", len(body), tok.MaxPayload), "send a smaller body")
	}
	return nil
}

func refuse(status int, reason, message, fix string) *rowcall.Error {
	return &rowcall.Error{Code: rowcall.Code(reason), Message: message, HowToFix: fix, Status: status,
		Extra: map[string]any{"ran": false}}
}
