package dispatch

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/typed"
)

// gate decides, before any runner, whether the call may run. A person (the
// one behind a session or a token they minted) must hold the call right now.
// For a token it
// checks, in the seed's order: revocation (and expiry), audience, the owner
// gate (then that every block the row includes is in the token's scope:
// include_out_of_scope:<BLOCK>), the contract pin, the risk ceiling, the fixed body and the payload
// ceiling — the last two only for the caller's own (top-level) call. Scope is
// settled before the gate: a row outside the token's scope does not exist for
// it (unknown_key), for reads and calls alike, nested calls included.
// Then, for every caller, the owner included, a drifted MCP row is held
// (driftHold), and the arguments are checked against the row's input_schema. A
// refusal's code is stable (rowcall.ETokenRevoked, …) and its Args are the
// dynamic parts of the seed's literal reason (rowcall.Error.Reason).
func (d *Dispatcher) gate(tok *rowcall.Token, who *rowcall.Person, l *looked, inv *rowcall.Invocation, top bool, now time.Time) *rowcall.Error {
	row := inv.Row
	if who != nil {
		if e := who.Forbids(rowcall.RightCall); e != nil {
			return refuse(e.Code, e.Args, e.Message, e.HowToFix)
		}
	}
	if tok != nil {
		if e := d.tokenGate(tok, l, inv.Body, top, now); e != nil {
			return e
		}
	}
	if e := d.driftHold(row); e != nil {
		return e
	}
	if row.InputSchema == "" {
		return nil
	}
	s, err := typed.Compile(row.InputSchema)
	if err != nil {
		return refuse(rowcall.EInvalidInputSchema, []string{row.Key}, err.Error(),
			"fix the row's input_schema with PATCH /api/directory/"+row.Key)
	}
	if err := s.Check(inv.Args); err != nil {
		return refuse(rowcall.EInvalidArguments, nil, err.Error(),
			"the arguments are mapped, in order, onto input_schema's properties; GET /api/directory/"+row.Key+" shows them")
	}
	return nil
}

func (d *Dispatcher) tokenGate(tok *rowcall.Token, l *looked, body string, top bool, now time.Time) *rowcall.Error {
	row, contract := &l.row, l.contract
	switch state := tok.State(now); {
	case state == rowcall.TokenRevoked:
		return refuse(rowcall.ETokenRevoked, []string{tok.ID}, "this token was revoked at "+tok.RevokedAt, "ask the owner for a new token")
	case state == rowcall.TokenExpired:
		return refuse(rowcall.ETokenExpired, []string{tok.ExpiresAt}, "this token expired at "+tok.ExpiresAt, "ask the owner for a new token")
	case tok.Audience != "*" && tok.Audience != d.Audience:
		return refuse(rowcall.EAudienceMismatch, []string{tok.Audience, d.Audience},
			"this token was minted for the audience "+tok.Audience+", not this host ("+d.Audience+")", "use a token minted by this host")
	case l.owner:
		return refuse(rowcall.EOwnerOnly, []string{row.Key}, row.Key+" acts with the owner's key ("+rowcall.OwnerEnv+"), so only the owner may call it",
			"call it with the owner key")
	}
	for i := range l.blocks {
		if b := &l.blocks[i]; b.Enabled != 0 && !tok.Covers(b) {
			return refuse(rowcall.EIncludeOutOfScope, []string{b.Key},
				row.Key+" sends the text of "+b.Key+" (its includes), which this token may not read",
				"ask the owner for a token whose scope covers "+b.Key+", or call a row that does not include it")
		}
	}
	if pinned, ok := tok.Pins[row.Key]; ok && pinned != contract {
		return refuse(rowcall.EContractChanged, []string{pinned, contract},
			row.Key+"'s callable contract changed since the token was pinned to it", "mint a fresh token against the new contract")
	}
	if row.Sensitive != 0 && tok.RiskCeiling != rowcall.RiskHigh {
		return refuse(rowcall.ERiskCeiling, []string{tok.RiskCeiling},
			row.Key+" is sensitive and the token's risk ceiling is "+tok.RiskCeiling, "mint a token with the higher ceiling; the row is not the problem")
	}
	if !top {
		return nil
	}
	if tok.FixedBody != nil && body != *tok.FixedBody {
		return refuse(rowcall.EFixedBody, []string{"mismatch"}, "this token may only send its fixed body", "send exactly the body the token was minted with")
	}
	if tok.MaxPayload > 0 && int64(len(body)) > tok.MaxPayload {
		return refuse(rowcall.EPayloadCeiling, []string{strconv.Itoa(len(body)), strconv.FormatInt(tok.MaxPayload, 10)},
			fmt.Sprintf("the body is %d bytes; this token allows at most %d", len(body), tok.MaxPayload), "send a smaller body")
	}
	return nil
}

// driftHold refuses a drifted MCP row (its server changed the tool, and the
// owner has neither accepted nor rejected the change: a "# DRIFTED:" line)
// unless the operator chose warn-only (DriftWarn). It holds for every
// caller and every call, nested ones included, so a changed tool never runs
// until someone decides.
func (d *Dispatcher) driftHold(row *rowcall.Row) *rowcall.Error {
	if d.DriftWarn || !strings.EqualFold(row.Runner, "mcp") || row.DocLine("DRIFTED") == "" {
		return nil
	}
	return refuse(rowcall.EDefinitionChanged, nil,
		row.Key+"'s MCP server changed the tool's definition; the row is held until the owner accepts or rejects the change",
		"the owner reviews the change on the console's page of the row (/#/row/"+row.Key+") or with POST /api/mcp/sync?dry_run=1, then accepts or rejects it: POST /api/mcp/sync?accept="+row.Key+" or ?reject="+row.Key+" (rowcall mcp sync --accept|--reject "+row.Key+")")
}

func refuse(code rowcall.Code, args []string, message, fix string) *rowcall.Error {
	return &rowcall.Error{Code: code, Args: args, Message: message, HowToFix: fix, Extra: map[string]any{"ran": false}}
}
