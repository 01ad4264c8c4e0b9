package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
)

// A call that waits for a person's approval (approval_required:<id>) is
// answered in the form the client negotiated (docs/RATIONALE.md, "Why does
// an MCP client that waits for an approval get the specification's URL
// elicitation?"):
//
//   - 2025-11-25, elicitation.url declared: the URLElicitationRequiredError
//     (-32042) of schema/2025-11-25, one url-mode elicitation whose url is
//     the console's page of the approval and whose elicitationId is its id;
//     once a person decides it (or it expires), the session gets
//     notifications/elicitation/complete for it. The client calls again
//     with the same arguments, and the call runs once on the approval.
//   - 2026-07-28 or later, elicitation.url declared: the InputRequiredResult
//     of schema/2026-07-28 (multi round-trip requests), one url-mode
//     elicitation/create under inputRequests["approval"], requestState the
//     approval's id. The retry echoes the state: once the client's response
//     is accept, it waits (up to dispatch.MaxWait) for the decision, and
//     runs on that approval, or answers input_required again while nobody
//     has decided.
//   - otherwise: the tool result that says the call awaits approval, and
//     where (awaiting), its fields in the result's _meta under ApprovalMeta,
//     where no upstream's answer can be.

// approvalForm is how a call waiting for approval is answered.
type approvalForm int

const (
	formText          approvalForm = iota // the tool result (awaiting)
	formURLError                          // URLElicitationRequiredError (2025-11-25)
	formInputRequired                     // InputRequiredResult (2026-07-28)
)

// approvalInput is the key of the approval's elicitation in inputRequests.
const approvalInput = "approval"

// sessionsVersion is the protocol of sessions: the first with URL elicitation.
const sessionsVersion = "2025-11-25"

// formOf is the form for a client speaking version with capabilities caps.
func formOf(version string, caps *sdk.ClientCapabilities) approvalForm {
	switch {
	case caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil:
		return formText
	case version >= newestProtocol:
		return formInputRequired
	case version >= sessionsVersion:
		return formURLError
	}
	return formText
}

// asked is what one tools/call brought, beyond its arguments, that its
// answer depends on when it waits for approval; and, set by the call, the
// protocol error it is answered with instead of a result.
type asked struct {
	form  approvalForm
	state string            // the requestState of a retry ("" on a first call)
	reply *sdk.ElicitResult // the retry's inputResponses["approval"]
	err   *jsonrpc.Error    // URLElicitationRequiredError: the answer
}

type askedKey struct{}

// withAsked carries a into ctx for dispatch.
func withAsked(ctx context.Context, a *asked) context.Context {
	return context.WithValue(ctx, askedKey{}, a)
}

// askedOf is the SDK's tools/call req as asked.
func askedOf(req *sdk.CallToolRequest) *asked {
	a := &asked{form: formOf(req.ProtocolVersion(), req.ClientCapabilities()), state: req.Params.RequestState}
	if r, ok := req.Params.InputResponses[approvalInput].(*sdk.ElicitResult); ok {
		a.reply = r
	}
	return a
}

// askedFast is a fast call's asked: the newest protocol's capabilities from
// its _meta, a session's from its initialize (params; nil when stateless).
func askedFast(c fastCall, version string, params *sdk.InitializeParams) *asked {
	if params != nil {
		return &asked{form: formOf(params.ProtocolVersion, params.Capabilities)}
	}
	var caps *sdk.ClientCapabilities
	if c.meta.Get(gjson.Escape(sdk.MetaKeyClientCapabilities) + ".elicitation.url").IsObject() {
		caps = &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}}
	}
	return &asked{form: formOf(version, caps)}
}

// retried is the approval a retry of the newest protocol names (its
// requestState), after waiting for its decision when the client's answer
// was accept: "" on any other call.
func (st *session) retried(ctx context.Context, a *asked) string {
	if a == nil || a.form != formInputRequired || a.state == "" {
		return ""
	}
	if a.reply != nil && a.reply.Action == "accept" {
		st.h.cfg.Dispatcher.Await(ctx, a.state, dispatch.MaxWait) // the call itself says what became of it
	}
	return a.state
}

// awaiting answers a call that waits for approval (err: approval_required,
// or approval_pending on a retry that named it) in the form a asks for.
func (st *session) awaiting(a *asked, err error, key string, receiptURL func(string) string) *sdk.CallToolResult {
	var e *rowcall.Error
	errors.As(err, &e)
	id, base := e.Args[0], st.base()
	approve := base + "/#/approvals/" + id
	form := formText
	if a != nil && base != "" && (e.Code == rowcall.EApprovalRequired || a.reply == nil || a.reply.Action == "accept") {
		form = a.form // without the host's address there is no URL to send; a declined or cancelled elicitation is answered with the text
	}
	message := e.Message + ". A person approves or denies it at this address; then call " + key + " again with the same arguments: it runs once on that approval."
	switch form {
	case formURLError:
		data, _ := json.Marshal(map[string]any{"elicitations": []*sdk.ElicitParams{{Mode: "url", Message: message, URL: approve, ElicitationID: id}},
			"approval_id": id, "key": key, "approval_url": base + "/api/approvals/" + id, "invocation_id": e.Extra["invocation_id"]})
		a.err = &jsonrpc.Error{Code: sdk.CodeURLElicitationRequired, Message: e.Reason() + ": " + e.Message, Data: data}
		st.watch(id)
		return nil
	case formInputRequired:
		return &sdk.CallToolResult{RequestState: id,
			InputRequests: sdk.InputRequestMap{approvalInput: &sdk.ElicitParams{Mode: "url", Message: message, URL: approve}}}
	}
	text := e.Reason() + ": " + e.Message + ".\nA person approves or denies it at " + approve +
		" (the API: " + base + "/api/approvals/" + id + "). Once it is approved, call " + key +
		" again with the same arguments: it runs once on that approval."
	meta := map[string]any{"ok": false, "ran": false, "key": key, "status": string(e.Code), "approval_id": id,
		"approve_url": approve, "approval_url": base + "/api/approvals/" + id, "expires_at": e.Extra["expires_at"]}
	content := []sdk.Content{&sdk.TextContent{Text: text}}
	if inv, _ := e.Extra["invocation_id"].(string); inv != "" {
		meta["invocation_id"], meta["public_receipt"] = inv, receiptURL(inv)
		content = append(content, receiptText(inv, receiptURL(inv), e.Reason()))
	}
	return &sdk.CallToolResult{Content: content, Meta: sdk.Meta{ApprovalMeta: meta}}
}

// ApprovalMeta is the _meta key of the tool result of a call that waits for
// approval (the text form): its approval's id, where to approve it, its
// status. An upstream's answer is a result's content or structuredContent,
// never its _meta, so no answer of a row can look like one that waits: a
// client reads rowcall's approval fields here, and only here.
const ApprovalMeta = "rowcall/approval"

// waits reports whether res says the call did not run and waits for
// approval (nil: its answer is a protocol error): no output to check.
func waits(res *sdk.CallToolResult) bool {
	return res == nil || res.InputRequests != nil || res.Meta[ApprovalMeta] != nil
}

// watch sends the session notifications/elicitation/complete for approval
// id once it leaves pending (approved, denied or expired), for as long as
// the session is open (a stateless request's is never: no stream to send
// on). A decision on this host wakes it at once; one on another host
// sharing the database is read within a second (Dispatcher.Await).
func (st *session) watch(id string) {
	st.mu.Lock()
	dup := st.awaited[id]
	if st.awaited == nil {
		st.awaited = map[string]bool{}
	}
	st.awaited[id] = true
	st.mu.Unlock()
	if dup || !st.h.holds(st) {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		select {
		case <-st.h.stop:
		case <-ctx.Done():
		}
	}()
	go func() {
		defer cancel()
		for st.h.holds(st) {
			a, err := st.h.cfg.Dispatcher.Await(ctx, id, dispatch.MaxWait)
			if err != nil {
				return
			}
			if a.Status != rowcall.ApprovalPending {
				st.decided(id)
				return
			}
		}
	}()
}

// decided tells the session that the elicitation of approval id is over: on
// its GET stream when one is attached, else as soon as one attaches
// (streamReady).
func (st *session) decided(id string) {
	st.mu.Lock()
	ready := st.ready
	if !ready {
		st.completed = append(st.completed, id)
	}
	st.mu.Unlock()
	if ready {
		st.notifyComplete(id)
	}
}

func (st *session) notifyComplete(ids ...string) {
	for ss := range st.server.Sessions() {
		for _, id := range ids {
			if err := ss.NotifyElicitationComplete(context.Background(), &sdk.ElicitationCompleteParams{ElicitationID: id}); err != nil {
				slog.Debug("mcp: elicitation complete not sent", "approval", id, "err", err)
			}
		}
	}
}

// holds reports whether st is one of the open sessions.
func (h *Handler) holds(st *session) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.closed && st.id != "" && h.sessions[st.id] == st
}
