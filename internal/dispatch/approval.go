package dispatch

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
)

// Approvals is where approvals live (sqlstore.Store implements it). Every
// change of state is one conditional statement, so hosts sharing a database
// cannot both decide or both use one.
type Approvals interface {
	CreateApproval(ctx context.Context, a rowcall.Approval, limit int) (id string, created bool, err error)
	Approval(ctx context.Context, id string) (rowcall.Approval, error)
	PendingApprovals(ctx context.Context) ([]rowcall.Approval, error)
	DecideApproval(ctx context.Context, id, status, by, reason, now, expiresAt string) (rowcall.Approval, bool, error)
	UseApproval(ctx context.Context, id, inv, now string, call rowcall.Approval) (rowcall.Approval, bool, error)
	MatchApproval(ctx context.Context, now string, call rowcall.Approval) (string, error)
	ExpireApprovals(ctx context.Context, now string) ([]rowcall.Approval, error)
}

// Approval timing: how long a request waits for a decision, how long an
// approval may be used by default, and the longest an approver may allow.
const (
	ApprovalPendingFor = time.Hour
	ApprovalValidFor   = 10 * time.Minute
	MaxApprovalValid   = 24 * time.Hour
	// MaxWait is the longest a call waits for its approval (Prefer: wait=N).
	MaxWait = 60 * time.Second
	// approvalRecheck is how often a waiting call reads its approval from the
	// database, for a decision taken on another host (this host's decisions
	// wake it at once).
	approvalRecheck = time.Second
	// notifyTimeout bounds the call of the notification row.
	notifyTimeout = 10 * time.Second
)

// MaxPendingPerCaller is how many approvals one calling credential (a
// token, or the owner) may have waiting for a decision at once; a call that
// would ask for one more is refused (too_many_approvals). A call identical to
// one that waits (same row, contract, arguments and credential) asks for no
// new one: it is answered with the waiting one's id.
const MaxPendingPerCaller = 20

// NotifyActor is the actor of the calls of the notification row
// (Dispatcher.ApprovalNotify).
const NotifyActor = "approval_notify"

// approvals is the store of approvals: Approvals, or the Store when it is one.
func (d *Dispatcher) approvals() Approvals {
	if d.Approvals != nil {
		return d.Approvals
	}
	a, _ := d.Store.(Approvals)
	return a
}

// bound is the approval the call stands for (its bindings only).
func bound(c *call, inv *rowcall.Invocation, l *looked) rowcall.Approval {
	return rowcall.Approval{Key: inv.Row.Key, Contract: l.contract, Input: rowcall.Fingerprint([]byte(inv.Body)),
		Caller: rowcall.CallerOf(c.token), Actor: c.actor, Person: c.person.PersonID()}
}

// approved decides, for a call that needs a person's approval, which
// approval it runs on: the one the request names (named: the top-level
// call's), or an approved one of exactly this call; "" when there is none
// and the call must ask for one (ask). It only reads: nothing is stored or
// sent before the call has passed its limits.
func (d *Dispatcher) approved(ctx context.Context, c *call, inv *rowcall.Invocation, l *looked, named string, now time.Time) (string, *rowcall.Error) {
	store := d.approvals()
	if store == nil {
		return "", refuse(rowcall.EApprovalUnknown, []string{named}, "this host keeps no approvals", "call it on a host with a database")
	}
	want := bound(c, inv, l)
	if named != "" {
		d.expire(ctx, now)
		a, err := store.Approval(ctx, named)
		if err != nil {
			return "", approvalRefusal(rowcall.Approval{ID: named}, want, err)
		}
		if e := approvalRefusal(a, want, nil); e != nil {
			return "", e
		}
		return named, nil
	}
	id, err := store.MatchApproval(ctx, now.UTC().Format(rowcall.Timestamp), want)
	if err != nil {
		return "", refuse(rowcall.EInternal, nil, "the approvals could not be read: "+err.Error(), "try again")
	}
	return id, nil
}

// ask records, for a call that needs a person's approval (why) and has
// none, a pending approval with the shape of what would be sent, and
// notifies the operator's row of it; it always refuses the call:
// approval_required:<id>. The same call already waiting is answered with
// that approval's id and notifies no one again; a caller with
// MaxPendingPerCaller approvals waiting is refused too_many_approvals. The
// call has passed its limits (its asking is the call they count).
func (d *Dispatcher) ask(ctx context.Context, c *call, inv *rowcall.Invocation, l *looked, why string, now time.Time) *rowcall.Error {
	store := d.approvals()
	want := bound(c, inv, l)
	at := now.UTC().Format(rowcall.Timestamp)
	want.ID, want.Why, want.Status = newID("apr_", now, 10), why, rowcall.ApprovalPending
	want.CreatedAt, want.ExpiresAt = at, now.Add(ApprovalPendingFor).UTC().Format(rowcall.Timestamp)
	want.Shape = d.preview(ctx, inv, *l)
	id, created, err := store.CreateApproval(ctx, want, MaxPendingPerCaller)
	switch {
	case err != nil:
		return refuse(rowcall.EInternal, nil, "the approval could not be stored: "+err.Error(), "try again")
	case id == "":
		return refuse(rowcall.ETooManyApprovals, []string{strconv.Itoa(MaxPendingPerCaller)},
			"this credential already has "+strconv.Itoa(MaxPendingPerCaller)+" calls waiting for a person's approval, the most it may have; "+inv.Row.Key+" did not run and no approval was asked for",
			"wait until a person decides one of them (or it expires, an hour after it was asked), then send this call again; sending a call that already waits asks for nothing new")
	case created:
		d.notify(ctx, c, want)
	default: // the same call waits already
		if a, err := store.Approval(ctx, id); err == nil {
			want = a
		}
		want.ID = id
	}
	e := refuse(rowcall.EApprovalRequired, []string{want.ID},
		inv.Row.Key+" waits for a person's approval ("+approvalCause(why)+"); it did not run",
		"a person approves it (the owner, or a token minted with \"approve\":true over this row); then send the same call again, with \"approval\":\""+want.ID+"\" or without, or send it with the header Prefer: wait=N to wait up to N seconds")
	e.Extra["approval_id"], e.Extra["status"], e.Extra["expires_at"], e.Extra["shape"] = want.ID, want.Status, want.ExpiresAt, want.Shape
	return e
}

func approvalCause(why string) string {
	switch why {
	case "row":
		return "the row requires approval"
	case "token:all":
		return "the token requires approval for every call"
	}
	return "the token requires approval for sensitive rows"
}

// approvalRefusal says why approval a cannot let the call want run (nil:
// it can, as far as its state read now shows). err is the error of reading it.
func approvalRefusal(a, want rowcall.Approval, err error) *rowcall.Error {
	id := a.ID
	switch {
	case rowcall.ErrorCode(err) == rowcall.ENotFound:
		return refuse(rowcall.EApprovalUnknown, []string{id}, "no approval "+id+" exists", "send the call without \"approval\" to ask for a new one")
	case err != nil:
		return refuse(rowcall.EInternal, nil, "the approval could not be read: "+err.Error(), "try again")
	case a.Key != want.Key:
		return mismatch(id, "key", "it approves a call of "+a.Key)
	case a.Caller != want.Caller:
		return mismatch(id, "caller", "it approves a call by another credential")
	case a.Contract != want.Contract:
		return mismatch(id, "contract", "the row's callable contract changed since it was asked for")
	case a.Input != want.Input:
		return mismatch(id, "input", "it approves other arguments")
	}
	switch a.Status {
	case rowcall.ApprovalApproved:
		return nil
	case rowcall.ApprovalPending:
		return refuse(rowcall.EApprovalPending, []string{id}, "approval "+id+" is not decided yet", "wait for a person to approve it, or send the call with Prefer: wait=N")
	case rowcall.ApprovalDenied:
		e := refuse(rowcall.EApprovalDenied, []string{id}, "approval "+id+" was denied by "+a.DecidedBy+reasonText(a.Reason), "the call will not run on it; ask again only if the reason is resolved")
		e.Extra["reason"], e.Extra["decided_by"] = a.Reason, a.DecidedBy
		return e
	case rowcall.ApprovalExpired:
		return refuse(rowcall.EApprovalExpired, []string{id}, "approval "+id+" expired at "+a.ExpiresAt, "send the call without \"approval\" to ask for a new one")
	}
	return refuse(rowcall.EApprovalUsed, []string{id}, "approval "+id+" already let one call run ("+a.UsedBy+"); an approval is used once", "send the call without \"approval\" to ask for a new one")
}

func reasonText(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

func mismatch(id, what, why string) *rowcall.Error {
	return refuse(rowcall.EApprovalMismatch, []string{id, what}, "approval "+id+" does not cover this call: "+why,
		"an approval covers one call: the same row at the same contract, the same arguments, the same credential; send this call without \"approval\" to ask for a new one")
}

// use marks the approval id used by the invocation inv; the call runs only
// when it could. It returns the approver.
func (d *Dispatcher) use(ctx context.Context, c *call, inv *rowcall.Invocation, l *looked, id, invID string, now time.Time) (string, *rowcall.Error) {
	store := d.approvals()
	want := bound(c, inv, l)
	a, ok, err := store.UseApproval(ctx, id, invID, now.UTC().Format(rowcall.Timestamp), want)
	if err != nil {
		return "", refuse(rowcall.EInternal, nil, "the approval could not be used: "+err.Error(), "try again")
	}
	if ok {
		return a.DecidedBy, nil
	}
	d.expire(ctx, now)
	a, err = store.Approval(ctx, id)
	a.ID = id
	if e := approvalRefusal(a, want, err); e != nil {
		return "", e
	}
	return "", refuse(rowcall.EApprovalExpired, []string{id}, "approval "+id+" expired", "send the call without \"approval\" to ask for a new one")
}

// preview is the shape of what the call would send: the runner's shape mode
// (credentials removed), or its SHAPE text when the runner has no plan.
func (d *Dispatcher) preview(ctx context.Context, inv *rowcall.Invocation, l looked) any {
	shape := *inv
	shape.Shape = true
	out, _ := d.execute(ctx, &shape, l)
	if out.Plan != nil {
		return out.Plan
	}
	return map[string]any{"key": inv.Row.Key, "body": redact.String(inv.Body, out.Secrets), "preview": redact.String(out.Result, out.Secrets)}
}

// notify calls the operator's notification row (ApprovalNotify) for a new
// approval, as the owner, with the body id|key|actor|why; its answer is its
// own receipt's business, never the waiting call's.
func (d *Dispatcher) notify(ctx context.Context, c *call, a rowcall.Approval) {
	if d.ApprovalNotify == "" || c.actor == NotifyActor {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
	defer cancel()
	res, err := d.Dispatch(ctx, Request{Key: d.ApprovalNotify, Body: strings.Join([]string{a.ID, a.Key, a.Actor, a.Why}, "|"), Principal: rowcall.Principal{Actor: NotifyActor}})
	if err == nil {
		res.Wait()
	}
}

// Approver is who decides an approval: the owner (Token nil), a token
// holder or a person, and the actor (and person) their decision's receipt
// names.
type Approver = rowcall.Principal

// Decision is an approver's answer to one approval.
type Decision struct {
	Approve  bool
	Reason   string
	ValidFor time.Duration // how long an approval may be used (ApprovalValidFor when 0; at most MaxApprovalValid)
}

// May reports whether who may read and decide approval a: the owner, or a
// token minted with the approve right that holds every right a call of the
// row needs, by the gate's own checks (tokenGate): live, of this audience,
// the row in its scope, not owner-only, under its risk ceiling, every block
// the row includes in its scope, its pin if any. The approval must be of the
// row as it is now (its contract): the shape stored with an older one may
// show what the token cannot read, and it could not let the call run anyway.
// A token never decides its own call (Decide), though it may read it.
func (d *Dispatcher) May(ctx context.Context, who Approver, a rowcall.Approval) bool {
	return d.mayDecide(ctx, who, a) == nil
}

// mayDecide is May's reason: nil, or why who may not.
func (d *Dispatcher) mayDecide(ctx context.Context, who Approver, a rowcall.Approval) *rowcall.Error {
	t := who.Token
	switch {
	case who.Person != nil && who.Person.Forbids(rowcall.RightApprove) != nil:
		return forbidden(who, a, "the person's role ("+string(who.Person.Role)+") does not hold the approve right")
	case t == nil:
		return nil
	case !t.Approve:
		return forbidden(who, a, "the token was not minted with \"approve\":true")
	}
	now := d.now()
	l, err := d.look(ctx, a.Key, now)
	switch {
	case err != nil:
		return forbidden(who, a, "its row could not be read ("+err.Error()+")")
	case !t.Covers(&l.row):
		return forbidden(who, a, a.Key+" is outside the token's scope")
	case l.contract != a.Contract:
		return forbidden(who, a, a.Key+"'s callable contract changed since it was asked for, so only the owner reads what it would have sent")
	}
	if e := d.tokenGate(t, &l, "", false, now); e != nil {
		return forbidden(who, a, "the token could not make the call itself: "+e.Reason()+": "+e.Message)
	}
	return nil
}

// forbidden is approve_forbidden:<actor>: who may not decide approval a,
// because of why.
func forbidden(who Approver, a rowcall.Approval, why string) *rowcall.Error {
	return refuse(rowcall.EApproveForbidden, []string{who.Actor}, who.Actor+" may not decide approvals of "+a.Key+": "+why+
		" (an approver needs the approve right and every right the call needs, and never decides its own call)",
		"ask someone else with the approve right who may call "+a.Key+" itself (a person whose role is approver, admin or owner and whose scope covers the row, or a token minted with \"approve\":true whose scope covers the row and every block it includes, and whose risk ceiling covers the row's), or decide it with the owner key")
}

// Decide approves or denies a pending approval, records the decision as a
// receipt (outcome approved:<id> or denied:<id>, the approver its actor;
// receipt is its id) and wakes the calls waiting for it. A token may not
// decide its own call.
func (d *Dispatcher) Decide(ctx context.Context, id string, who Approver, dec Decision) (a rowcall.Approval, receipt string, err error) {
	store := d.approvals()
	if store == nil {
		return a, "", refuse(rowcall.EApprovalUnknown, []string{id}, "this host keeps no approvals", "")
	}
	now := d.now()
	d.expire(ctx, now)
	if a, err = store.Approval(ctx, id); err != nil {
		return a, "", approvalRefusal(rowcall.Approval{ID: id}, rowcall.Approval{}, err)
	}
	if e := d.mayDecide(ctx, who, a); e != nil {
		return a, "", e
	}
	if who.Token != nil && who.Token.ID == a.Caller {
		return a, "", forbidden(who, a, "it is the token's own call")
	}
	if who.Person != nil && a.Person == who.Person.ID {
		return a, "", forbidden(who, a, "it is the person's own call")
	}
	status, valid := rowcall.ApprovalDenied, dec.ValidFor
	if dec.Approve {
		status = rowcall.ApprovalApproved
	}
	if valid <= 0 {
		valid = ApprovalValidFor
	}
	valid = min(valid, MaxApprovalValid)
	at := now.UTC().Format(rowcall.Timestamp)
	decided, ok, err := store.DecideApproval(ctx, id, status, who.Actor, dec.Reason, at, now.Add(valid).UTC().Format(rowcall.Timestamp))
	if err != nil {
		return a, "", err
	}
	if !ok {
		a, _ = store.Approval(ctx, id)
		if a.Status == rowcall.ApprovalExpired {
			return a, "", refuse(rowcall.EApprovalExpired, []string{id}, "approval "+id+" expired at "+a.ExpiresAt+" before it was decided", "the caller asks again by sending the call again")
		}
		return a, "", refuse(rowcall.EApprovalDecided, []string{id, a.Status}, "approval "+id+" is "+a.Status+" already", "nothing to decide")
	}
	approver := ""
	if dec.Approve {
		approver = who.Actor
	}
	rc := d.approvalReceipt(ctx, decided, status+":"+id, who.Actor, approver, now)
	if who.Token != nil {
		rc.TokenID = who.Token.ID
	}
	rc.PersonIssuer, rc.PersonSubject = who.Person.Iss(), who.Person.Sub()
	if err := <-d.Receipts.Append(rc); err != nil {
		return decided, "", err
	}
	d.waiters.wake(id)
	return decided, rc.ID, nil
}

// approvalReceipt is the receipt of a step in an approval's life (its
// decision, its expiry): not material, on the approval's row, contract and
// input, its output the fingerprint of the reason.
func (d *Dispatcher) approvalReceipt(ctx context.Context, a rowcall.Approval, outcome, actor, approver string, now time.Time) rowcall.Receipt {
	typ, runner := rowcall.Type(""), ""
	if row, err := d.Store.Lookup(ctx, a.Key); err == nil {
		typ, runner = row.Type, row.RunnerName()
	}
	return rowcall.Receipt{ID: newID("inv_", now, 8), Trace: newID("t_", now, 6), Actor: actor, Key: a.Key, Type: typ, Runner: runner,
		StartedAt: now.UTC().Format(rowcall.Timestamp), OK: true, Outcome: outcome, Input: a.Input,
		Output: rowcall.Fingerprint([]byte(a.Reason)), Contract: a.Contract, Approval: a.ID, Approver: approver}
}

// ExpiryActor is the actor of an approval's expiry receipt.
const ExpiryActor = "rowcall:expiry"

// expire marks the approvals whose time ran out expired, each with its
// receipt (outcome expired:<id>), and wakes their waiting calls.
func (d *Dispatcher) expire(ctx context.Context, now time.Time) {
	store := d.approvals()
	if store == nil {
		return
	}
	gone, err := store.ExpireApprovals(ctx, now.UTC().Format(rowcall.Timestamp))
	if err != nil {
		return
	}
	var waits []<-chan error
	for _, a := range gone {
		waits = append(waits, d.Receipts.Append(d.approvalReceipt(ctx, a, rowcall.ApprovalExpired+":"+a.ID, ExpiryActor, "", now)))
		d.waiters.wake(a.ID)
	}
	for _, w := range waits {
		<-w
	}
}

// Pending lists the approvals waiting for a decision that who may decide
// (after marking the expired ones).
func (d *Dispatcher) Pending(ctx context.Context, who Approver) ([]rowcall.Approval, error) {
	store := d.approvals()
	if store == nil {
		return []rowcall.Approval{}, nil
	}
	d.expire(ctx, d.now())
	all, err := store.PendingApprovals(ctx)
	if err != nil {
		return nil, err
	}
	out := []rowcall.Approval{}
	for _, a := range all {
		if d.May(ctx, who, a) && (who.Token == nil || who.Token.ID != a.Caller) {
			out = append(out, a)
		}
	}
	return out, nil
}

// Approval returns one approval, after marking the expired ones.
func (d *Dispatcher) Approval(ctx context.Context, id string) (rowcall.Approval, error) {
	store := d.approvals()
	if store == nil {
		return rowcall.Approval{}, refuse(rowcall.EApprovalUnknown, []string{id}, "this host keeps no approvals", "")
	}
	d.expire(ctx, d.now())
	a, err := store.Approval(ctx, id)
	if err != nil {
		return a, approvalRefusal(rowcall.Approval{ID: id}, rowcall.Approval{}, err)
	}
	return a, nil
}

// Await waits up to wait (at most MaxWait) for approval id to leave pending,
// and returns it as it is then. A decision on this host wakes it at once;
// one on another host sharing the database is read within approvalRecheck.
func (d *Dispatcher) Await(ctx context.Context, id string, wait time.Duration) (rowcall.Approval, error) {
	wait = min(wait, MaxWait)
	woken := d.waiters.add(id)
	defer d.waiters.remove(id, woken)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	recheck := time.NewTicker(approvalRecheck)
	defer recheck.Stop()
	for {
		a, err := d.Approval(ctx, id)
		if err != nil || a.Status != rowcall.ApprovalPending {
			return a, err
		}
		select {
		case <-woken:
		case <-recheck.C:
		case <-deadline.C:
			return a, nil
		case <-ctx.Done():
			return a, ctx.Err()
		}
	}
}

// waiters are the calls in this process waiting for approvals, by id.
type waiters struct {
	mu sync.Mutex
	by map[string][]chan struct{}
}

func (w *waiters) add(id string) chan struct{} {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		w.by = map[string][]chan struct{}{}
	}
	w.by[id] = append(w.by[id], ch)
	return ch
}

func (w *waiters) remove(id string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.by[id]
	for i, c := range list {
		if c == ch {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(w.by, id)
	} else {
		w.by[id] = list
	}
}

func (w *waiters) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.by[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
