package dispatch_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/runners/httpcall"
)

// approvalHost is a dispatcher whose row PAY needs a person's approval, with
// the operator's notification row NOTIFY; hits counts the upstream's
// requests by path (/pay, /notify).
type approvalHost struct {
	d    *dispatch.Dispatcher
	mu   sync.Mutex
	hits map[string]int
}

func newApprovalHost(t *testing.T) *approvalHost {
	h := &approvalHost{hits: map[string]int{}}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits[r.URL.Path]++
		h.mu.Unlock()
		io.WriteString(w, `{"paid":true}`)
	}))
	t.Cleanup(up.Close)
	h.d = testenv.Dispatcher(t, map[rowcall.Type]rowcall.Runner{rowcall.TypeHTTP: httpcall.New(httpcall.Config{Client: up.Client()})})
	for _, r := range []rowcall.Row{
		{Key: "NOTIFY", Type: rowcall.TypeHTTP, Target: "GET " + up.URL + "/notify?id=$1", Content: "# WHAT: tell the approvers"},
		{Key: "PAY", Type: rowcall.TypeHTTP, Target: "GET " + up.URL + "/pay?to=$1", Content: "# WHAT: pay someone", Approval: 1},
	} {
		r.Enabled = 1
		if _, err := sqlStore(h.d).Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	h.d.ApprovalNotify = "NOTIFY"
	return h
}

func (h *approvalHost) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

// pending is how many approvals wait for a decision.
func (h *approvalHost) pending(t *testing.T) int {
	list, err := h.d.Pending(context.Background(), dispatch.Approver{Actor: "owner:test"})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// pay calls PAY with body as tok, on dispatcher d, and returns the error's
// code ("" when it ran) and the approval id of an approval_required.
func pay(t *testing.T, d *dispatch.Dispatcher, tok *rowcall.Token, body string) (rowcall.Code, string) {
	t.Helper()
	res, err := d.Dispatch(context.Background(), dispatch.Request{Key: "PAY", Body: body, Principal: rowcall.Principal{Actor: "token:" + tok.ID, Token: tok}})
	if err != nil {
		var id string
		if rowcall.ErrorCode(err) == rowcall.EApprovalRequired {
			id = err.(*rowcall.Error).Args[0]
		}
		return rowcall.ErrorCode(err), id
	}
	if err := res.Wait(); err != nil {
		t.Fatal(err)
	}
	if !res.Ran {
		t.Fatalf("PAY %s did not run: %s", body, res.Result)
	}
	return "", ""
}

// A token allowed one call an hour and one a day asks for one approval,
// however many calls it sends: its limits are checked before an approval
// is stored or the notification row called, and asking is its call. Once
// approved, the call it asked for runs (the approval's one run is not
// counted again); the next call is refused by the limits.
func TestAskingForApprovalPassesTheLimitsFirst(t *testing.T) {
	h := newApprovalHost(t)
	tok := &rowcall.Token{ID: "tok_once", Keys: []string{"PAY"}, Audience: "*",
		Limits: rowcall.Limits{Rate: "1/hour", CallsDay: 1}}
	asked, id := 0, ""
	for i := range 200 {
		code, got := pay(t, h.d, tok, "supplier "+strconv.Itoa(i%7))
		switch code {
		case rowcall.EApprovalRequired:
			asked, id = asked+1, got
		case rowcall.ERateLimited, rowcall.EBudgetExhausted:
		default:
			t.Fatalf("call %d: %q", i, code)
		}
	}
	if asked != 1 || h.pending(t) != 1 || h.count("/notify") != 1 || h.count("/pay") != 0 {
		t.Fatalf("%d calls asked for approval, %d approvals wait, the notification row ran %d times, the upstream %d; want 1, 1, 1, 0",
			asked, h.pending(t), h.count("/notify"), h.count("/pay"))
	}
	if _, _, err := h.d.Decide(context.Background(), id, dispatch.Approver{Actor: "owner:test"}, dispatch.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if code, _ := pay(t, h.d, tok, "supplier 0"); code != "" || h.count("/pay") != 1 {
		t.Fatalf("the approved call: %q (%d upstream calls)", code, h.count("/pay"))
	}
	if code, _ := pay(t, h.d, tok, "supplier 0"); code != rowcall.ERateLimited && code != rowcall.EBudgetExhausted {
		t.Fatalf("a call after the approved one: %q, want a limit's refusal", code)
	}
	if h.pending(t) != 0 || h.count("/notify") != 1 {
		t.Fatalf("%d approvals wait, %d notifications", h.pending(t), h.count("/notify"))
	}
}

// The same call sent again while its approval waits is answered with that
// approval's id, and nobody is notified again; a caller has at most
// MaxPendingPerCaller approvals waiting (too_many_approvals beyond, nothing
// stored), other callers are not affected, and hosts asking at once on one
// database do not pass the cap.
func TestPendingApprovalsAreMergedAndCapped(t *testing.T) {
	h := newApprovalHost(t)
	tok := &rowcall.Token{ID: "tok_many", Keys: []string{"PAY"}, Audience: "*"}
	_, first := pay(t, h.d, tok, "acme")
	for range 5 {
		if code, id := pay(t, h.d, tok, "acme"); code != rowcall.EApprovalRequired || id != first {
			t.Fatalf("the same call again: %q %s, want approval_required:%s", code, id, first)
		}
	}
	if h.pending(t) != 1 || h.count("/notify") != 1 {
		t.Fatalf("%d approvals wait and %d notifications for one call sent six times", h.pending(t), h.count("/notify"))
	}
	for i := 1; i < dispatch.MaxPendingPerCaller; i++ {
		if code, _ := pay(t, h.d, tok, "supplier "+strconv.Itoa(i)); code != rowcall.EApprovalRequired {
			t.Fatalf("approval %d: %q", i+1, code)
		}
	}
	if code, _ := pay(t, h.d, tok, "one too many"); code != rowcall.ETooManyApprovals {
		t.Fatalf("approval %d: %q, want too_many_approvals", dispatch.MaxPendingPerCaller+1, code)
	}
	if code, id := pay(t, h.d, tok, "acme"); code != rowcall.EApprovalRequired || id != first {
		t.Fatalf("a waiting call at the cap: %q %s, want approval_required:%s", code, id, first)
	}
	if n := h.pending(t); n != dispatch.MaxPendingPerCaller || h.count("/notify") != dispatch.MaxPendingPerCaller || h.count("/pay") != 0 {
		t.Fatalf("%d approvals wait, %d notifications, %d upstream calls", n, h.count("/notify"), h.count("/pay"))
	}
	other := &rowcall.Token{ID: "tok_other", Keys: []string{"PAY"}, Audience: "*"}
	if code, _ := pay(t, h.d, other, "one too many"); code != rowcall.EApprovalRequired {
		t.Fatalf("another token's call: %q", code)
	}

	// Two hosts on one database, asking at once.
	d2 := &dispatch.Dispatcher{Store: h.d.Store, Receipts: h.d.Receipts, Runners: h.d.Runners, Env: h.d.Env}
	racer := &rowcall.Token{ID: "tok_racer", Keys: []string{"PAY"}, Audience: "*"}
	var wg sync.WaitGroup
	codes := make(chan rowcall.Code, 60)
	for i := range 60 {
		wg.Go(func() {
			code, _ := pay(t, []*dispatch.Dispatcher{h.d, d2}[i%2], racer, "racer "+strconv.Itoa(i))
			codes <- code
		})
	}
	wg.Wait()
	close(codes)
	asked := 0
	for code := range codes {
		switch code {
		case rowcall.EApprovalRequired:
			asked++
		case rowcall.ETooManyApprovals:
		default:
			t.Fatalf("a racing call: %q", code)
		}
	}
	if n := h.pending(t); asked != dispatch.MaxPendingPerCaller || n != 2*dispatch.MaxPendingPerCaller+1 {
		t.Fatalf("%d racing calls asked for approval and %d approvals wait in all; want %d and %d", asked, n, dispatch.MaxPendingPerCaller, 2*dispatch.MaxPendingPerCaller+1)
	}
}

// An approver holds every right the call needs, by the gate's own checks:
// a token with the approve right over category money but a low risk
// ceiling neither lists nor decides a sensitive row's call, nor one of a
// row that includes a block outside its scope (the stored shape would show
// the block's text); one that could make the call itself does both. An
// approval asked of a row since changed is the owner's alone.
func TestApproverHoldsTheCallsRights(t *testing.T) {
	h := newApprovalHost(t)
	ctx := context.Background()
	store := sqlStore(h.d)
	up := "GET http://127.0.0.1:9/"
	for _, r := range []rowcall.Row{
		{Key: "PAY_SENSITIVE", Type: rowcall.TypeHTTP, Target: up + "?to=$1", Category: "money", Sensitive: 1, Approval: 1,
			InputSchema: `{"type":"object","properties":{"to":{"type":"string"}}}`, Content: "# WHAT: pay, sensitively"},
		{Key: "PAY_NOTES", Type: rowcall.TypeHTTP, Target: up + "?to=$1", Category: "money", Includes: "PRIVATE_NOTES", Approval: 1, Content: "# WHAT: pay with notes"},
		{Key: "PRIVATE_NOTES", Type: rowcall.TypeHTTP, Target: up, Category: "notes", Content: "# WHAT: the owner's private notes"},
	} {
		r.Enabled = 1
		if _, err := store.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	caller := &rowcall.Token{ID: "tok_caller", Categories: []string{"*"}, RiskCeiling: rowcall.RiskHigh, Audience: "*"}
	ask := func(key string) string {
		_, err := h.d.Dispatch(ctx, dispatch.Request{Key: key, Body: "acme", Principal: rowcall.Principal{Actor: "token:" + caller.ID, Token: caller}})
		if rowcall.ErrorCode(err) != rowcall.EApprovalRequired {
			t.Fatalf("%s: %v", key, err)
		}
		return err.(*rowcall.Error).Args[0]
	}
	sensitive, notes := ask("PAY_SENSITIVE"), ask("PAY_NOTES")
	listed := func(who dispatch.Approver) map[string]bool {
		list, err := h.d.Pending(ctx, who)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, a := range list {
			ids[a.ID] = true
		}
		return ids
	}
	low := dispatch.Approver{Actor: "token:tok_low", Token: &rowcall.Token{ID: "tok_low", Categories: []string{"money"}, RiskCeiling: rowcall.RiskLow, Audience: "*", Approve: true}}
	if ids := listed(low); ids[sensitive] || ids[notes] {
		t.Fatalf("an approver without the call's rights lists %v", ids)
	}
	for _, id := range []string{sensitive, notes} {
		a, _ := h.d.Approval(ctx, id)
		if h.d.May(ctx, low, a) {
			t.Fatalf("an approver without the call's rights may read %s (%s)", id, a.Key)
		}
		if _, _, err := h.d.Decide(ctx, id, low, dispatch.Decision{Approve: true}); rowcall.ErrorCode(err) != rowcall.EApproveForbidden {
			t.Fatalf("an approver without the call's rights decides %s (%s): %v", id, a.Key, err)
		}
	}
	full := dispatch.Approver{Actor: "token:tok_full", Token: &rowcall.Token{ID: "tok_full", Categories: []string{"money", "notes"}, RiskCeiling: rowcall.RiskHigh, Audience: "*", Approve: true}}
	if ids := listed(full); !ids[sensitive] || !ids[notes] {
		t.Fatalf("an approver with the call's rights lists %v", ids)
	}
	if _, _, err := h.d.Decide(ctx, sensitive, full, dispatch.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}

	// The row changed since: the stored shape is of another row.
	row, err := store.Lookup(ctx, "PAY_NOTES")
	if err != nil {
		t.Fatal(err)
	}
	row.Content = "# WHAT: pay with other notes"
	if _, err := store.Replace(ctx, row, 0); err != nil {
		t.Fatal(err)
	}
	h.d.Touch()
	if ids := listed(full); ids[notes] || !listed(dispatch.Approver{Actor: "owner:test"})[notes] {
		t.Fatalf("an approval of a row since changed: the token lists %v", ids)
	}
}
