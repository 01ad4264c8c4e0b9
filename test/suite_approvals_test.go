package test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// suiteApprovals: a call that needs a person's approval does not run; it is
// answered 202 approval_required:<id> with the shape of what would be sent
// and where to approve; an approval runs exactly that call (same row
// contract, same arguments, same credential) once; a denial, an expiry, a
// waiting call and the MCP path; every step a receipt, the call's naming its
// approval and approver.
func suiteApprovals(t *testing.T, tg *target, up *upstream) {
	const recorded, proven = "RECORDED_NOT_MATERIAL", "PROVEN_MATERIAL_RESULT"
	h := tg.host
	// The operator's notification row (ROWCALL_APPROVAL_NOTIFY, set for every host of the suite).
	createRow(t, h, map[string]any{"key": "S_APPR_NOTIFY", "type": "http", "target": "GET " + up.URL + "/notify?id=$1&key=$2&actor=$3&why=$4",
		"content": "# WHAT: Tell the suite's approvers about a waiting call.\n# ARGS: $1=id | $2=key | $3=actor | $4=why"})
	createRow(t, h, map[string]any{"key": "S_APPR", "type": "http", "target": "GET " + up.URL + "/appr?q=$1", "auth": "bearer:SUITE_API_KEY",
		"content": "# WHAT: Pay the suite's named supplier.\n# ARGS: $1=supplier", "approval": 1})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_APPR"}), 200, map[string]any{"approval": 1})
	caller, callerID, _ := mint(t, h, map[string]any{"name": "caller", "keys": []string{"S_APPR"}})
	other, _, _ := mint(t, h, map[string]any{"name": "other", "keys": []string{"S_APPR"}})
	approverTok, approverID, _ := mint(t, h, map[string]any{"name": "approver", "keys": []string{"S_APPR"}, "approve": true})
	plain, plainID, _ := mint(t, h, map[string]any{"name": "no approve right", "keys": []string{"S_APPR"}})
	hits := func() int {
		n := 0
		for _, r := range up.requests() {
			if r.Path == "/appr" {
				n++
			}
		}
		return n
	}

	// The call waits: 202, the literal, the shape without the credential, where to approve.
	got := tokenCall(t, h, caller, "S_APPR", "alice")
	id := pendingID(t, got)
	if s, _ := got.JSON["shape"].(map[string]any); s == nil || !strings.Contains(s["url"].(string), "/appr?q=alice") {
		t.Fatalf("shape: %s", got.Raw)
	}
	if strings.Contains(string(got.Raw), suiteSecret) || got.JSON["approve_url"] != h.URL+"/#/approvals/"+id {
		t.Fatalf("answer: %s", got.Raw)
	}
	if hits() != 0 {
		t.Fatal("a call waiting for approval reached the upstream")
	}
	notified := false
	for _, r := range up.requests() {
		notified = notified || r.Path == "/notify" && r.Query == "id="+id+"&key=S_APPR&actor=token%3A"+callerID+"&why=row"
	}
	if !notified {
		t.Fatalf("the notification row was not called for %s: %v", id, up.requests())
	}
	requested := confirmed(t, h, got.JSON["invocation_id"].(string), recorded)
	if requested["outcome"] != "approval_required:"+id || requested["approval"] != id || requested["material"] != false {
		t.Fatalf("request receipt %v", requested)
	}

	// Approvers see it with its shape and caller; a token without the right does not, and cannot decide.
	for _, secret := range []string{"", approverTok} {
		r := req{Method: "GET", Path: "/api/approvals"}
		var list resp
		if secret == "" {
			list = h.do(t, r)
		} else {
			list = asToken(t, h, secret, r)
		}
		a := findApproval(t, list, id)
		if a["caller"] != callerID || a["actor"] != "token:"+callerID || a["shape"] == nil || a["key"] != "S_APPR" {
			t.Fatalf("pending %v", a)
		}
	}
	if l := asToken(t, h, plain, req{Method: "GET", Path: "/api/approvals"}); strings.Contains(string(l.Raw), id) {
		t.Fatalf("a token without the approve right sees %s", l.Raw)
	}
	expect(t, asToken(t, h, plain, req{Method: "POST", Path: "/api/approvals/" + id + "/approve"}), 403,
		map[string]any{"error": "approve_forbidden:token:" + plainID})
	expect(t, asToken(t, h, caller, req{Method: "POST", Path: "/api/approvals/" + id + "/approve"}), 403,
		map[string]any{"error": "approve_forbidden:token:" + callerID})

	// Not decided yet; another argument is another call.
	expect(t, approvedCall(t, h, caller, "alice", id), 409, map[string]any{"error": "approval_pending:" + id})
	expect(t, approvedCall(t, h, caller, "bob", id), 409, map[string]any{"error": "approval_mismatch:" + id + ":input"})

	d := asToken(t, h, approverTok, req{Method: "POST", Path: "/api/approvals/" + id + "/approve", Body: map[string]any{"reason": "checked the supplier"}})
	expect(t, d, 200, map[string]any{"ok": true})
	if decided := confirmed(t, h, d.JSON["invocation_id"].(string), recorded); decided["outcome"] != "approved:"+id || decided["actor"] != "token:"+approverID {
		t.Fatalf("approval receipt %v", decided)
	}
	expect(t, approvedCall(t, h, other, "alice", id), 409, map[string]any{"error": "approval_mismatch:" + id + ":caller"})
	expect(t, approvedCall(t, h, caller, "bob", id), 409, map[string]any{"error": "approval_mismatch:" + id + ":input"})

	// Approved: it runs once, and its receipt names the approval and the approver.
	ran := approvedCall(t, h, caller, "alice", id)
	expect(t, ran, 200, map[string]any{"ok": true, "ran": true})
	rc := confirmed(t, h, ran.JSON["proof"].(map[string]any)["invocation_id"].(string), proven)
	if rc["approval"] != id || rc["approver"] != "token:"+approverID || rc["outcome"] != "ok" {
		t.Fatalf("call receipt %v", rc)
	}
	if hits() != 1 {
		t.Fatalf("%d upstream calls, want 1", hits())
	}
	expect(t, approvedCall(t, h, caller, "alice", id), 409, map[string]any{"error": "approval_used:" + id})
	if got := tokenCall(t, h, caller, "S_APPR", "alice"); got.Status != 202 { // no id: a new request, not the used one
		t.Fatalf("a second call without an approval: %s", got.Raw)
	}
	if hits() != 1 {
		t.Fatalf("%d upstream calls after the approval was used, want 1", hits())
	}

	// Sent many times at once, an approval still lets one call run.
	id5 := pendingID(t, tokenCall(t, h, caller, "S_APPR", "ivan"))
	expect(t, h.do(t, req{Method: "POST", Path: "/api/approvals/" + id5 + "/approve"}), 200, nil)
	answers := make(chan resp, 8)
	for range 8 {
		go func() {
			r, err := h.send(req{Method: "POST", Path: "/api/dispatch", NoAuth: true, Body: map[string]any{"key": "S_APPR", "body": "ivan", "approval": id5},
				Header: map[string]string{"Authorization": "Bearer " + caller}})
			if err != nil {
				t.Error(err)
			}
			answers <- r
		}()
	}
	ranOnce := 0
	for range 8 {
		r := <-answers
		switch {
		case r.Status == 200 && r.JSON["ran"] == true:
			ranOnce++
		case r.Status == 409 && r.JSON["error"] == "approval_used:"+id5:
		default:
			t.Errorf("a concurrent use of %s: %d %s", id5, r.Status, r.Raw)
		}
	}
	if ranOnce != 1 || hits() != 2 {
		t.Fatalf("%d of 8 concurrent calls ran (%d upstream calls), want 1", ranOnce, hits())
	}

	// An edit of the row's contract needs a new approval.
	id2 := pendingID(t, tokenCall(t, h, caller, "S_APPR", "carol"))
	expect(t, h.do(t, req{Method: "POST", Path: "/api/approvals/" + id2 + "/approve"}), 200, nil)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/S_APPR", Body: map[string]any{"content": "# WHAT: Pay the suite's named supplier, twice.\n# ARGS: $1=supplier"}}), 200, nil)
	expect(t, approvedCall(t, h, caller, "carol", id2), 409, map[string]any{"error": "approval_mismatch:" + id2 + ":contract"})

	// A denial, with its reason.
	id3 := pendingID(t, tokenCall(t, h, caller, "S_APPR", "dave"))
	d = h.do(t, req{Method: "POST", Path: "/api/approvals/" + id3 + "/deny", Body: map[string]any{"reason": "not this supplier"}})
	expect(t, d, 200, nil)
	if denied := confirmed(t, h, d.JSON["invocation_id"].(string), recorded); denied["outcome"] != "denied:"+id3 || denied["actor"] != "owner:terminal-key" {
		t.Fatalf("denial receipt %v", denied)
	}
	expect(t, approvedCall(t, h, caller, "dave", id3), 403, map[string]any{"error": "approval_denied:" + id3, "reason": "not this supplier"})
	expect(t, h.do(t, req{Method: "POST", Path: "/api/approvals/" + id3 + "/approve"}), 409, map[string]any{"error": "approval_decided:" + id3 + ":denied"})

	// An approval that is not used in time expires, with a receipt.
	got = tokenCall(t, h, caller, "S_APPR", "erin")
	id4 := pendingID(t, got)
	after := confirmed(t, h, got.JSON["invocation_id"].(string), recorded)["seq"].(float64)
	expect(t, h.do(t, req{Method: "POST", Path: "/api/approvals/" + id4 + "/approve", Body: map[string]any{"expires_in": 1}}), 200, nil)
	for deadline := time.Now().Add(20 * time.Second); ; {
		a := h.do(t, req{Method: "GET", Path: "/api/approvals/" + id4})
		if a.JSON["status"] == "expired" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not expired: %s", a.Raw)
		}
	}
	expect(t, approvedCall(t, h, caller, "erin", id4), 410, map[string]any{"error": "approval_expired:" + id4})
	if !receiptWith(t, h, after, "expired:"+id4) {
		t.Fatalf("no expiry receipt for %s", id4)
	}
	if hits() != 2 {
		t.Fatalf("%d upstream calls, want 2", hits())
	}

	// Prefer: wait=N: the call runs the moment it is approved.
	done := make(chan resp, 1)
	go func() {
		r, err := h.send(req{Method: "POST", Path: "/api/dispatch", NoAuth: true, Body: map[string]any{"key": "S_APPR", "body": "frank"},
			Header: map[string]string{"Authorization": "Bearer " + caller, "Prefer": "wait=30"}})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	waiting := ""
	for deadline := time.Now().Add(20 * time.Second); waiting == ""; {
		for _, a := range h.do(t, req{Method: "GET", Path: "/api/approvals"}).JSON["approvals"].([]any) {
			if a := a.(map[string]any); a["caller"] == callerID && strings.Contains(fmt.Sprint(a["shape"]), "q=frank") {
				waiting = a["id"].(string)
			}
		}
		if waiting == "" && time.Now().After(deadline) {
			t.Fatal("the waiting call's approval never appeared")
		}
	}
	start := time.Now()
	expect(t, h.do(t, req{Method: "POST", Path: "/api/approvals/" + waiting + "/approve"}), 200, nil)
	select {
	case r := <-done:
		expect(t, r, 200, map[string]any{"ok": true, "ran": true})
		if r.Header.Get("Preference-Applied") != "wait=30" {
			t.Fatalf("Preference-Applied %q", r.Header.Get("Preference-Applied"))
		}
		if rc := confirmed(t, h, r.JSON["proof"].(map[string]any)["invocation_id"].(string), proven); rc["approval"] != waiting || rc["approver"] != "owner:terminal-key" {
			t.Fatalf("waited call receipt %v", rc)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("the waiting call did not run once approved")
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("the waiting call took %s after its approval", waited)
	}

	// A flow step needs its own approval; approved, the flow runs.
	createRow(t, h, map[string]any{"key": "S_APPR_FLOW", "type": "flow", "content": "# WHAT: Pay through a flow.\nS_APPR: $1"})
	got = dispatchCall(t, h, "S_APPR_FLOW", "hank")
	step, _ := got.JSON["result"].(string)
	if !strings.HasPrefix(step, "ERR:gate:approval_required:apr_") {
		t.Fatalf("a flow over a row that needs approval: %s", got.Raw)
	}
	stepID := strings.SplitN(strings.TrimPrefix(step, "ERR:gate:approval_required:"), " ", 2)[0]
	expect(t, h.do(t, req{Method: "POST", Path: "/api/approvals/" + stepID + "/approve"}), 200, nil)
	expect(t, dispatchCall(t, h, "S_APPR_FLOW", "hank"), 200, map[string]any{"ok": true, "ran": true})
	if hits() != 4 { // alice, ivan, frank, hank
		t.Fatalf("%d upstream calls, want 4", hits())
	}

	// A token minted with approval "sensitive" or "all".
	createRow(t, h, map[string]any{"key": "S_APPR_SENS", "type": "http", "target": "GET " + up.URL + "/sens?q=$1", "sensitive": 1,
		"input_schema": `{"type":"object","properties":{"q":{"type":"string"}}}`, "content": "# WHAT: A sensitive suite row."})
	createRow(t, h, map[string]any{"key": "S_APPR_PLAIN", "type": "http", "target": "GET " + up.URL + "/plain?q=$1", "content": "# WHAT: A plain suite row."})
	sens, _, _ := mint(t, h, map[string]any{"keys": []string{"S_APPR_SENS", "S_APPR_PLAIN"}, "risk_ceiling": "high", "approval": "sensitive"})
	all, _, _ := mint(t, h, map[string]any{"keys": []string{"S_APPR_PLAIN"}, "approval": "all"})
	expect(t, tokenCall(t, h, sens, "S_APPR_PLAIN", "x"), 200, map[string]any{"ran": true})
	sensID := pendingID(t, tokenCall(t, h, sens, "S_APPR_SENS", "x"))
	// An approver holds every right the call needs: with a low risk ceiling it neither sees nor decides a sensitive row's call.
	low, lowID, _ := mint(t, h, map[string]any{"keys": []string{"S_APPR_SENS"}, "approve": true})
	if l := asToken(t, h, low, req{Method: "GET", Path: "/api/approvals"}); l.Status != 200 || strings.Contains(string(l.Raw), sensID) {
		t.Fatalf("an approver below the row's risk lists %s", l.Raw)
	}
	expect(t, asToken(t, h, low, req{Method: "GET", Path: "/api/approvals/" + sensID}), 404, map[string]any{"error": "approval_unknown:" + sensID})
	expect(t, asToken(t, h, low, req{Method: "POST", Path: "/api/approvals/" + sensID + "/approve"}), 403,
		map[string]any{"error": "approve_forbidden:token:" + lowID})
	high, _, _ := mint(t, h, map[string]any{"keys": []string{"S_APPR_SENS"}, "approve": true, "risk_ceiling": "high"})
	findApproval(t, asToken(t, h, high, req{Method: "GET", Path: "/api/approvals"}), sensID)
	pendingID(t, tokenCall(t, h, all, "S_APPR_PLAIN", "x"))
	expect(t, h.do(t, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"keys": []string{"S_APPR"}, "approval": "some"}}), 400,
		map[string]any{"error": "invalid_request"})

	// MCP: the tool result says the call awaits approval, and where.
	s := connectMCP(t, h, "Authorization", "Bearer "+caller)
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "call_capability", Arguments: map[string]any{"key": "S_APPR", "args": "gina"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if res.IsError || !strings.HasPrefix(text, "approval_required:apr_") || !strings.Contains(text, h.URL+"/#/approvals/apr_") {
		t.Fatalf("MCP result %v: %s", res.IsError, text)
	}
	mcpID := strings.TrimPrefix(strings.Fields(text)[0], "approval_required:")
	mcpID = strings.TrimSuffix(mcpID, ":")
	// rowcall's own approval fields are in the result's _meta (rowcall/approval), where an upstream's
	// answer never is; an upstream that answers with the same fields is a result that ran.
	awaits := structured(t, res.Meta["rowcall/approval"])
	if awaits["approval_id"] != mcpID || awaits["approve_url"] != h.URL+"/#/approvals/"+mcpID || awaits["status"] != "approval_required" {
		t.Fatalf("MCP result's rowcall/approval %v (structuredContent %v)", res.Meta, res.StructuredContent)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["approval_id"] != nil {
		t.Fatalf("MCP result's structuredContent carries approval fields: %v", sc)
	}
	createRow(t, h, map[string]any{"key": "S_APPR_MIMIC", "type": "http", "target": "GET " + up.URL + "/mimic",
		"content": "# WHAT: A report whose answer looks like a call waiting for approval.", "output_schema": `{"type":"object"}`})
	mimic := connectMCP(t, h, "x-terminal-key", h.Key).call(t, "S_APPR_MIMIC", map[string]any{})
	if out := structured(t, mimic.StructuredContent); out["approval_id"] != "apr_mimic0000000000000" || mimic.IsError ||
		mimic.Meta["rowcall/approval"] != nil || structured(t, mimic.Meta["rowcall/call"])["ran"] != true {
		t.Fatalf("an upstream's answer imitating an approval: isError %v, structuredContent %v, _meta %v", mimic.IsError, mimic.StructuredContent, mimic.Meta)
	}
	if got := dispatchCall(t, h, "S_APPR_MIMIC", ""); got.Status != 200 || got.JSON["approval_id"] != nil || got.JSON["ran"] != true ||
		!strings.Contains(got.JSON["result"].(string), "apr_mimic") {
		t.Fatalf("the API's answer of an upstream imitating an approval: %d %s", got.Status, got.Raw)
	}
	expect(t, h.do(t, req{Method: "POST", Path: "/api/approvals/" + mcpID + "/approve"}), 200, nil)
	res, err = s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "call_capability", Arguments: map[string]any{"key": "S_APPR", "args": "gina"}})
	if err != nil || res.IsError {
		t.Fatalf("MCP call once approved: %v %v", err, res)
	}
	if hits() != 5 { // alice, ivan, frank, hank, gina
		t.Fatalf("%d upstream calls, want 5", hits())
	}
	suiteApprovalsElicit(t, tg, caller, hits)
}

// suiteApprovalsElicit: over MCP, a client that declared URL elicitation
// gets the specification's form of a call waiting for approval: a
// 2025-11-25 session the URLElicitationRequiredError naming the console's
// page of the approval, then notifications/elicitation/complete once the
// owner approved it; a 2026-07-28 client an input_required result, which the
// Go SDK client fulfils (its handler approves, as the person would) and
// retries. Each retried call runs exactly once, its receipt naming the
// approval. The worker keeps no session, so a 2025-11-25 client's
// capabilities are not known there: it gets the tool result's text.
func suiteApprovalsElicit(t *testing.T, tg *target, caller string, hits func() int) {
	h := tg.host
	ctx := context.Background()
	elicited := make(chan *sdk.ElicitParams, 4)
	completed := make(chan string, 4)
	reply := "accept"
	connect := func(version string) *sdk.ClientSession {
		client := sdk.NewClient(&sdk.Implementation{Name: "rowcall-test-elicit", Version: "1.0.0"}, &sdk.ClientOptions{
			Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
			ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				elicited <- r.Params
				if version == "" && reply == "accept" { // the person opens the page and approves
					id := strings.TrimPrefix(r.Params.URL, h.URL+"/#/approvals/")
					if got, err := h.send(req{Method: "POST", Path: "/api/approvals/" + id + "/approve"}); err != nil || got.Status != http.StatusOK {
						return nil, fmt.Errorf("approving %s: %v %s", id, err, got.Raw)
					}
				}
				return &sdk.ElicitResult{Action: reply}, nil
			},
			ElicitationCompleteHandler: func(_ context.Context, r *sdk.ElicitationCompleteNotificationRequest) {
				completed <- r.Params.ElicitationID
			},
		})
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: h.URL + "/mcp",
			HTTPClient: &http.Client{Transport: headerTransport{"Authorization", "Bearer " + caller}}, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect %q: %v", version, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	call := func(cs *sdk.ClientSession, who string) (*sdk.CallToolResult, error) {
		return cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_capability", Arguments: map[string]any{"key": "S_APPR", "args": who}})
	}
	ranOn := func(res *sdk.CallToolResult, err error, id string) {
		t.Helper()
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("the call once approved: %v %v", err, res)
		}
		inv, _ := callFields(t, res)["invocation_id"].(string)
		if rc := confirmed(t, h, inv, "PROVEN_MATERIAL_RESULT"); rc["approval"] != id || rc["approver"] != "owner:terminal-key" || rc["outcome"] != "ok" {
			t.Fatalf("the call's receipt %v", rc)
		}
	}
	upstream := hits()

	// 2025-11-25: the URL elicitation error, the completion, the retry.
	s := connect("2025-11-25")
	res, err := call(s, "jack")
	if tg.Name == "worker" {
		if err != nil || res.IsError || !strings.HasPrefix(res.Content[0].(*sdk.TextContent).Text, "approval_required:apr_") {
			t.Fatalf("a 2025-11-25 call on the worker: %v %v", err, res)
		}
	} else {
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != sdk.CodeURLElicitationRequired {
			t.Fatalf("a 2025-11-25 call waiting for approval: %v %v", err, res)
		}
		var data struct {
			Elicitations []sdk.ElicitParams `json:"elicitations"`
			ApprovalID   string             `json:"approval_id"`
		}
		if err := json.Unmarshal(rpc.Data, &data); err != nil || len(data.Elicitations) != 1 {
			t.Fatalf("error data %s: %v", rpc.Data, err)
		}
		e, id := data.Elicitations[0], data.ApprovalID
		if e.Mode != "url" || e.ElicitationID != id || e.URL != h.URL+"/#/approvals/"+id || !strings.HasPrefix(id, "apr_") || e.Message == "" {
			t.Fatalf("elicitation %+v (approval %s)", e, id)
		}
		if hits() != upstream {
			t.Fatal("a call waiting for approval reached the upstream")
		}
		expect(t, h.do(t, req{Method: "POST", Path: "/api/approvals/" + id + "/approve"}), 200, nil)
		select {
		case got := <-completed:
			if got != id {
				t.Fatalf("completion of %s, want %s", got, id)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no notifications/elicitation/complete within 20s of the approval")
		}
		res, err = call(s, "jack")
		ranOn(res, err, id)
		if hits() != upstream+1 {
			t.Fatalf("%d upstream calls, want %d", hits(), upstream+1)
		}
		if _, err := call(s, "jack"); !errors.As(err, &rpc) || rpc.Code != sdk.CodeURLElicitationRequired { // used: a new request
			t.Fatalf("the call again after its approval was used: %v", err)
		}
		upstream++
	}
	if hits() != upstream {
		t.Fatalf("%d upstream calls, want %d", hits(), upstream)
	}

	// 2026-07-28: input_required, fulfilled by the client (approved), retried, run once.
	n := connect("")
	res, err = call(n, "kate")
	var e *sdk.ElicitParams
	select {
	case e = <-elicited:
	default:
		t.Fatalf("no elicitation reached the client: %v %v", err, res)
	}
	id := strings.TrimPrefix(e.URL, h.URL+"/#/approvals/")
	if e.Mode != "url" || !strings.HasPrefix(id, "apr_") || e.ElicitationID != "" {
		t.Fatalf("elicitation %+v", e)
	}
	ranOn(res, err, id)
	if hits() != upstream+1 {
		t.Fatalf("%d upstream calls, want %d", hits(), upstream+1)
	}
	// Declined: the call did not run, and the result says where it is approved.
	reply = "decline"
	res, err = call(n, "lena")
	if err != nil || res.IsError || !strings.HasPrefix(res.Content[0].(*sdk.TextContent).Text, "approval_pending:apr_") || hits() != upstream+1 {
		t.Fatalf("a declined elicitation: %v %v (%d upstream calls)", err, res, hits())
	}
}

// pendingID checks a 202 approval_required answer and returns its id.
func pendingID(t *testing.T, got resp) string {
	t.Helper()
	id, _ := got.JSON["approval_id"].(string)
	expect(t, got, 202, map[string]any{"error": "approval_required:" + id, "ran": false, "status": "pending"})
	if !strings.HasPrefix(id, "apr_") {
		t.Fatalf("approval id %q: %s", id, got.Raw)
	}
	return id
}

// approvedCall calls S_APPR with body, naming approval id.
func approvedCall(t *testing.T, h *host, token, body, id string) resp {
	t.Helper()
	return approvedCall2(t, h, token, "S_APPR", body, id)
}

// findApproval returns approval id from a GET /api/approvals answer.
func findApproval(t *testing.T, list resp, id string) map[string]any {
	t.Helper()
	expect(t, list, 200, nil)
	for _, a := range list.JSON["approvals"].([]any) {
		if a := a.(map[string]any); a["id"] == id {
			return a
		}
	}
	t.Fatalf("%s not pending: %s", id, list.Raw)
	return nil
}

// receiptWith reports whether a receipt after seq has outcome.
func receiptWith(t *testing.T, h *host, after float64, outcome string) bool {
	t.Helper()
	got := h.do(t, req{Method: "GET", Path: fmt.Sprintf("/api/receipts?after=%d&limit=10000", int64(after))})
	expect(t, got, 200, nil)
	for _, r := range got.JSON["receipts"].([]any) {
		if r.(map[string]any)["outcome"] == outcome {
			return true
		}
	}
	return false
}
