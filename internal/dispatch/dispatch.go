// Package dispatch invokes a row by key: it looks the row up, refuses what must
// not run (an unknown key, a disabled row, a call the caller's token does not
// allow, arguments the row's input_schema rejects, an open breaker, a call
// nested too deep or one nested call too many: MaxCalls), hands the call to the runner for the row's type, redacts
// every credential value the runner injected, and appends the engine's signed
// receipt to the chain — for every invocation and every refusal at the gate,
// nested flow steps and agent tool calls included, linked by trace and parent.
//
// Fill a Dispatcher (Store, Runners by row type, Env, Receipts; optionally
// Modules, Audience, Now, Fresh, Speculate) and call Dispatch with a Request.
// Acknowledge a call only after its Result's Wait returns nil: its receipt,
// and every nested call's, is then stored. Call Touch after this process
// changes a row, a module or a breaker, so the next call looks at the event
// log whatever Fresh says. Contract returns the fingerprint a token pins.
// docs/ARCHITECTURE.md follows one call through this package.
package dispatch

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
	"github.com/rowcall/rowcall/internal/redact"
)

// Modules resolves the digest of the module an fn row's target names.
type Modules interface {
	Digest(ctx context.Context, target string) (string, error)
}

// Store is what the dispatcher reads: rows (through its cache), the ask index
// for did_you_mean, and breakers. sqlstore.Store implements it.
type Store interface {
	Lookup(ctx context.Context, key string) (rowcall.Row, error)
	LastEvent(ctx context.Context) (int64, error)
	Search(ctx context.Context, query string, f rowcall.SearchFilter) ([]rowcall.Hit, error)
	KeyCategories(ctx context.Context) ([]rowcall.Row, error)
	rowcall.Breakers
}

// Dispatcher runs rows.
type Dispatcher struct {
	Store    Store
	Runners  map[rowcall.Type]rowcall.Runner
	Env      rowcall.Env
	Receipts rowcall.ReceiptWriter // signs every receipt into the chain (sqlstore.ReceiptLog: group commit)
	Modules  Modules               // optional: fn module digests for the contract fingerprint
	Audience string                // this host's audience; tokens minted for another are refused
	Now      func() time.Time      // the clock; time.Now when nil

	// Fresh is how long one look at the event log stays good for other calls
	// (0: every call looks). Writes through this process (Touch) end it at
	// once; a write by another process or host is seen within Fresh.
	Fresh time.Duration

	// Speculate runs an fn row, when its cached entry is there but the event
	// log is due a look, before looking: its receipt's INSERT checks the log
	// instead (one statement, sqlstore.ReceiptLog.AppendIf), and a call whose
	// row changed meanwhile is thrown away and run again on the new row. It
	// saves a round trip per call where every call would look (Fresh 0, as at
	// the edge) or a look is a network request (sqld). Only fn rows: a
	// sandboxed module's run changes nothing outside its answer, so a run
	// thrown away did nothing; an http row's request cannot be taken back.
	Speculate bool

	// Meter is the shared count behind tokens' limits (limits.go); the
	// Store's when nil and it is one.
	Meter Meter

	// Approvals keeps the calls that wait for a person (approval.go); the
	// Store's when nil and it is one. ApprovalNotify is the key of a row
	// called, as the owner, for each new approval (body id|key|actor|why).
	Approvals      Approvals
	ApprovalNotify string
	// Connect returns the access token of holder's connection to provider
	// (internal/connect.Service.Token): a call's runners reach it through
	// rowcall.ConnectorOf, bound to the calling credential (the token's id,
	// or rowcall.OwnerHolder), so a connection serves only the credential
	// that made it. nil: the host has no providers.
	Connect func(ctx context.Context, holder, provider string) (string, *rowcall.Failure)
	// DriftWarn lets drifted MCP rows run, marked (ROWCALL_MCP_DRIFT=warn);
	// by default the gate holds them (driftHold).
	DriftWarn bool
	// Called, when set, is told of each top-level call that ran and
	// succeeded, before Dispatch returns: whether the owner made it (not a
	// call made for someone else, such as ask's rerank), the token that made
	// it, and its receipt (internal/learn: a call after an ask teaches).
	Called func(ctx context.Context, owner bool, tok *rowcall.Token, rc rowcall.Receipt)

	cache    cache     // rows and contracts, valid while the event log does not move
	fresh    freshness // the last look at the event log
	limiters limiters  // tokens' rate buckets in this process
	waiters  waiters   // calls waiting for an approval in this process
}

// Request is one top-level call.
type Request struct {
	Key   string
	Body  string
	Shape bool
	// Principal is who the call is for: its Actor and Person go on every
	// receipt of the call, its Token (nil for the owner) gates it.
	rowcall.Principal
	// Payer, for a call with the owner's authority (Token nil) made for a
	// token's holder (ask's rerank, internal/rerank), is the token it is
	// charged to: its limits gate the call, its id is on the receipts and
	// their cost counts in its budgets. With Token set, Token pays.
	Payer *rowcall.Token
	// Approval is the approval (apr_…) the call asks to run on; without one,
	// a call that needs approval runs on an approved one of exactly this
	// call, or waits for a new one (approval.go).
	Approval string
}

// payer is the token req is charged to (nil: none).
func (req *Request) payer() *rowcall.Token {
	if req.Token != nil {
		return req.Token
	}
	return req.Payer
}

// Result is the answer to a Request.
type Result struct {
	OK     bool
	Ran    bool
	Trace  string
	Result string
	Plan   any
	// MCPContent: Result is an MCP tool's answer as MCP's JSON
	// (rowcall.Output.MCPContent).
	MCPContent bool
	Receipt    rowcall.Receipt // as queued: its chain fields are set when stored
	stored     <-chan error
}

// Wait blocks until the call's receipt — and so every receipt of its nested
// calls, queued before it — is stored. Acknowledge a call only after Wait
// returns nil.
func (r Result) Wait() error {
	if r.stored == nil {
		return nil
	}
	return <-r.stored
}

// Dispatch runs one top-level call. An unknown or disabled row, or a call the
// gate refuses, is an error (nothing ran; a gate refusal is still recorded).
// Anything that reached a runner is a Result with a receipt.
func (d *Dispatcher) Dispatch(ctx context.Context, req Request) (Result, error) {
	res, err := d.dispatch(ctx, req)
	if d.Called != nil && err == nil && res.OK && res.Ran {
		d.Called(ctx, req.Token == nil && req.Payer == nil && strings.HasPrefix(req.Actor, "owner:"), req.Token, res.Receipt)
	}
	return res, err
}

func (d *Dispatcher) dispatch(ctx context.Context, req Request) (Result, error) {
	if res, err, ok := d.speculate(ctx, req); ok {
		return res, err
	}
	l, err := d.find(ctx, req.Key, req.Token)
	if err != nil {
		return Result{}, err
	}
	return d.top(ctx, req, l, nil)
}

// top runs a top-level call on its looked-up row; with a snapshot, its
// receipts are stored only while the event log's newest id is that (see
// Speculate). A gate refusal waits for its receipt and is the error.
func (d *Dispatcher) top(ctx context.Context, req Request, l looked, snapshot *int64) (Result, error) {
	c := &call{d: d, actor: req.Actor, token: req.Token, person: req.Person, payer: req.payer(), trace: newID("t_", d.now(), 6), snapshot: snapshot, approval: req.Approval}
	ctx = c.count(ctx, l.row.Type)
	if d.Connect != nil {
		holder := rowcall.OwnerHolder
		if req.Token != nil {
			holder = req.Token.ID
		}
		ctx = rowcall.WithConnector(ctx, func(ctx context.Context, provider string) (string, *rowcall.Failure) {
			return d.Connect(ctx, holder, provider)
		})
	}
	inv := &rowcall.Invocation{Row: &l.row, Body: req.Body, Shape: req.Shape, Trace: c.trace, Module: l.module}
	out, ran, rc, stored, refused := c.run(ctx, inv, l, "", true)
	if refused != nil {
		if err := <-stored; err != nil {
			return Result{}, err
		}
		return Result{Trace: c.trace, Receipt: rc}, refused
	}
	return Result{OK: !out.Failed(), Ran: ran && !req.Shape, Trace: c.trace, Result: out.Result, Plan: out.Plan,
		MCPContent: out.MCPContent && !out.Failed(), Receipt: rc, stored: stored}, nil
}

// find returns an enabled row, or the seed's unknown_key error with up to three
// did_you_mean keys (only keys the token may see), or a row_disabled error. A
// row outside the token's scope is unknown to it.
func (d *Dispatcher) find(ctx context.Context, key string, tok *rowcall.Token) (looked, error) {
	l, err := d.look(ctx, key, d.now())
	if err == nil && tok != nil && !tok.Covers(&l.row) {
		err = &rowcall.Error{Code: rowcall.ENotFound}
	}
	if rowcall.ErrorCode(err) == rowcall.ENotFound {
		return l, &rowcall.Error{Code: rowcall.EUnknownKey, Message: "no row has the key " + key,
			HowToFix: "use a did_you_mean entry, or GET /api/dispatch?ask=<plain words>",
			Extra:    map[string]any{"attempted": key, "ran": false, "did_you_mean": d.suggest(ctx, key, tok)}}
	}
	if err != nil {
		return l, err
	}
	if l.row.Enabled == 0 {
		return l, &rowcall.Error{Code: rowcall.EDisabled, Message: key + " is disabled (enabled = 0), so it does not run",
			HowToFix: `enable it with PATCH /api/directory/` + key + ` {"enabled":1}`, Extra: map[string]any{"key": key, "ran": false}}
	}
	return l, nil
}

// suggest finds up to three keys near an unknown one: candidates from the ask
// index (the key's words as prefixes), or, when the index has none, every key
// the caller may see; ranked by edit distance.
func (d *Dispatcher) suggest(ctx context.Context, key string, tok *rowcall.Token) []string {
	f := rowcall.SearchFilter{Limit: 25, All: tok == nil}
	if tok != nil {
		f.Scope = &rowcall.Scope{Keys: tok.Keys, Categories: tok.Categories}
	}
	hits, _ := d.Store.Search(ctx, strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(key), f)
	var keys []string
	for _, h := range hits {
		keys = append(keys, h.Row.Key)
	}
	if found := Suggest(key, keys, 3); len(found) > 0 {
		return found
	}
	return Suggest(key, d.visibleKeys(ctx, tok), 3)
}

// visibleKeys lists the keys the caller may see: every key for the owner,
// the token's scope otherwise.
func (d *Dispatcher) visibleKeys(ctx context.Context, tok *rowcall.Token) []string {
	rows, _ := d.Store.KeyCategories(ctx)
	var keys []string
	for i := range rows {
		if tok == nil || tok.Covers(&rows[i]) {
			keys = append(keys, rows[i].Key)
		}
	}
	return keys
}

// call is one top-level call and every call nested in it: same trace, actor
// and token. It implements rowcall.Caller (and rowcall.Purse) for the
// runners.
type call struct {
	d        *Dispatcher
	actor    string
	token    *rowcall.Token  // the authority: nil for the owner's
	person   *rowcall.Person // the person behind actor and token, if any: named on every receipt
	payer    *rowcall.Token  // who is charged: token, or Request.Payer
	live     float64         // what the call tree's paid requests cost so far (payer's meter's spendMu; limits.go)
	trace    string
	snapshot *int64        // speculative: receipts are stored only while the event log's newest id is this
	approval string        // the approval the top-level call names (Request.Approval)
	calls    *atomic.Int64 // the nested calls made so far: own's, or those of the call whose $SELF request this is (count)
	own      atomic.Int64
}

// MaxCalls bounds the nested calls (flow steps and branches, agent tool
// calls) one top-level call makes in all, the top-level calls its rows make
// of this host's own API through $SELF and theirs included: MaxDepth bounds
// how deep calls nest, this how many there are, so a flow that fans out into
// itself (64 branches, 8 deep: 64^8 calls) ends after MaxCalls with
// ERR:dispatch:too_many_calls:<MaxCalls>.
const MaxCalls = 1024

type callsKey struct{}

// count sets the count of nested calls c belongs to: a call of this host's
// API made by a row (outbound.Self serves it in process, with the calling
// row's context) counts in its caller's; any other in its own, carried in
// the returned context to the calls its row makes — unless the row is an fn
// row, which calls nothing.
func (c *call) count(ctx context.Context, typ rowcall.Type) context.Context {
	if n, ok := ctx.Value(callsKey{}).(*atomic.Int64); ok {
		c.calls = n
		return ctx
	}
	c.calls = &c.own
	if typ == rowcall.TypeFn {
		return ctx
	}
	return context.WithValue(ctx, callsKey{}, c.calls)
}

// parented binds a call to the invocation id its nested calls hang under.
type parented struct {
	*call
	parentID string
}

// Call runs a nested call (a flow step, an agent's tool call): one level
// deeper, through the same gate, with its own receipt. A refusal is an ERR.
func (p parented) Call(ctx context.Context, parent *rowcall.Invocation, key, body string) rowcall.Output {
	if parent.Depth+1 > rowcall.MaxDepth {
		return rowcall.Fail("dispatch", "depth_exceeded", strconv.Itoa(parent.Depth+1)).
			Because(fmt.Sprintf("calls nest at most %d deep; check for a flow that calls itself", rowcall.MaxDepth)).Output()
	}
	if p.calls.Add(1) > MaxCalls {
		return rowcall.Fail("dispatch", "too_many_calls", strconv.Itoa(MaxCalls)).
			Because(fmt.Sprintf("one call makes at most %d nested calls in all; check for a flow that fans out into itself", MaxCalls)).Output()
	}
	l, err := p.d.find(ctx, key, p.token)
	if err != nil {
		return rowcall.Fail("", string(rowcall.ErrorCode(err)), key).Output()
	}
	inv := &rowcall.Invocation{Row: &l.row, Body: body, Trace: p.trace, Depth: parent.Depth + 1, Module: l.module}
	out, _, _, _, refused := p.run(ctx, inv, l, p.parentID, false)
	if refused != nil {
		return refused.Failure("gate").Output()
	}
	return out
}

// run gates inv, executes it with its row's runner, and queues its receipt
// (stored reports when it is written). ran reports whether the runner was
// reached; refused is the gate's refusal.
func (c *call) run(ctx context.Context, inv *rowcall.Invocation, l looked, parentID string, top bool) (out rowcall.Output, ran bool, rc rowcall.Receipt, stored <-chan error, refused *rowcall.Error) {
	d, row := c.d, inv.Row
	start := d.now()
	id := newID("inv_", start, 8)
	inv.Args = args.Split(inv.Body)
	inv.Env = d.Env
	inv.Calls = parented{call: c, parentID: id}

	contract := l.contract
	var counted <-chan struct{}
	var approval, approver, asks string
	if refused = d.gate(c.token, c.person, &l, inv, top, start); refused == nil && !inv.Shape {
		if why := rowcall.ApprovalWhy(row, c.token); why != "" { // a nested call runs on an approval of exactly itself
			named := ""
			if top {
				named = c.approval
			}
			if approval, refused = d.approved(ctx, c, inv, &l, named, start); refused == nil && approval == "" {
				asks = why
			}
		}
	}
	// The limits come before anything the call does: asking for an approval
	// (its row and its notification) counts as the call; the one run of an
	// approval is not counted again (limits.go).
	if refused == nil && top {
		refused, counted = d.limit(ctx, c.payer, start, approval != "")
	}
	if refused == nil && asks != "" {
		refused = d.ask(ctx, c, inv, &l, asks, start)
	}
	if refused == nil && approval != "" {
		approver, refused = d.use(ctx, c, inv, &l, approval, id, start)
	}
	if refused != nil && refused.Code == rowcall.EApprovalRequired {
		approval = refused.Args[0]
	}
	if refused == nil {
		out, ran = d.execute(ctx, inv, l)
		out.Result = redact.String(out.Result, out.Secrets)
		out.Fail = out.Fail.Map(func(s string) string { return redact.String(s, out.Secrets) })
	} else {
		out.Result = refused.Reason()
	}
	rc = rowcall.Receipt{
		PersonIssuer: c.person.Iss(), PersonSubject: c.person.Sub(),
		ID: id, Trace: inv.Trace, Parent: parentID, Actor: c.actor, Key: row.Key, Type: row.Type, Runner: row.RunnerName(),
		StartedAt: start.UTC().Format(rowcall.Timestamp), Millis: float64(d.now().Sub(start).Microseconds()) / 1000,
		OK: refused == nil && !out.Failed(), Material: out.Material && !inv.Shape, Shape: inv.Shape, CostUSD: out.CostUSD,
		Status: out.Status, Outcome: outcome(out, refused), Input: rowcall.Fingerprint([]byte(inv.Body)),
		Output: rowcall.Fingerprint([]byte(out.Result)), Contract: contract, Approval: approval, Approver: approver,
	}
	if c.payer != nil {
		rc.TokenID = c.payer.ID
		d.spend(c, rc.CostUSD, start, top) // the budget's running spend (limits.go)
	}
	if c.snapshot != nil {
		stored = d.Receipts.AppendIf(rc, *c.snapshot)
	} else {
		stored = d.Receipts.Append(rc)
	}
	if counted != nil { // in its token's shared count before it is answered (limits.go), while its receipt is stored
		select {
		case <-counted:
		case <-ctx.Done():
		}
	}
	if refused != nil {
		refused.Extra["invocation_id"] = rc.ID
	}
	return out, ran, rc, stored, refused
}

// execute checks the breaker, runs the runner and feeds the breaker.
func (d *Dispatcher) execute(ctx context.Context, inv *rowcall.Invocation, l looked) (rowcall.Output, bool) {
	row := inv.Row
	runner, ok := d.Runners[row.Type]
	if !ok {
		return rowcall.Fail(string(row.Type), "no_runner").Because("this host has no runner for " + string(row.Type) + " rows").Output(), false
	}
	if l.open && !inv.Shape {
		return rowcall.Fail("", "breaker_open", row.Key).Because("8 consecutive auth failures; credential is dead until replaced.").Output(), false
	}
	out := runner.Run(ctx, inv)
	// Only an auth failure, or the first answer after one, writes breaker state.
	if failed := out.Status == 401 || out.Status == 403; !inv.Shape && out.Status != 0 && (failed || l.failures > 0) {
		d.recordAuth(context.WithoutCancel(ctx), row.Key, failed)
		d.Touch()
	}
	return out, true
}

// recordAuth feeds key's breaker. A write the database refuses for a moment
// (a busy file under load) is tried again: a lost failure would let a dead
// credential be sent upstream once more than the threshold allows.
func (d *Dispatcher) recordAuth(ctx context.Context, key string, failed bool) {
	for attempt, wait := 0, 5*time.Millisecond; attempt < 4; attempt, wait = attempt+1, wait*4 {
		if d.Store.RecordAuth(ctx, key, failed, d.now()) == nil {
			return
		}
		time.Sleep(wait)
	}
}

// outcome is the receipt's short outcome: "ok", "refused:<reason>", or the
// failure's (rowcall.Failure.Outcome, e.g. ERR:http:401), never a body.
func outcome(out rowcall.Output, refused *rowcall.Error) string {
	if refused != nil && refused.Code == rowcall.EApprovalRequired { // not refused: waiting
		return refused.Reason()
	}
	if refused != nil {
		return "refused:" + refused.Reason()
	}
	if out.Fail != nil {
		return out.Fail.Outcome()
	}
	return "ok"
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

const idAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// newID returns prefix, the time at in milliseconds as 8 base-36 digits, then n
// random base-36 characters (inv_mimzk3a0x7p2q9f1). Ids made later sort later,
// so each new receipt lands at the right-hand end of the id and trace indexes:
// a group commit then writes a few index pages, not one per receipt.
func newID(prefix string, at time.Time, n int) string {
	b := make([]byte, len(prefix)+8+n)
	copy(b, prefix)
	ms := uint64(at.UnixMilli())
	for i := len(prefix) + 7; i >= len(prefix); i-- {
		b[i] = idAlphabet[ms%36]
		ms /= 36
	}
	r := b[len(prefix)+8:]
	rand.Read(r)
	for i := range r {
		r[i] = idAlphabet[int(r[i])%len(idAlphabet)]
	}
	return string(b)
}

// Clock is the time now by the dispatcher's clock (what the gate judges a token's expiry by).
func (d *Dispatcher) Clock() time.Time { return d.now() }

// Contract returns the row's current contract fingerprint (with its module's
// digest for an fn row, and its included blocks for an agent row): what a
// token pins.
func (d *Dispatcher) Contract(ctx context.Context, row *rowcall.Row) (string, error) {
	blocks, err := d.blocks(ctx, row)
	if err != nil {
		return "", err
	}
	return rowcall.ContractFingerprint(row, d.moduleDigest(ctx, row), blocks), nil
}

// blocks reads the rows named in row's includes: at most one past
// rowcall.MaxIncludes (a row over the limit fails when it runs, and
// fingerprints differently); a missing one is a Row with only its key.
func (d *Dispatcher) blocks(ctx context.Context, row *rowcall.Row) ([]rowcall.Row, error) {
	keys := row.IncludeKeys()
	if len(keys) == 0 {
		return nil, nil
	}
	blocks := make([]rowcall.Row, 0, min(len(keys), rowcall.MaxIncludes+1))
	for _, k := range keys[:min(len(keys), rowcall.MaxIncludes+1)] {
		b, err := d.Store.Lookup(ctx, k)
		switch rowcall.ErrorCode(err) {
		case "":
		case rowcall.ENotFound:
			b = rowcall.Row{Key: k}
		default:
			return nil, err
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// moduleDigest is the digest of the module an fn row runs ("" otherwise).
func (d *Dispatcher) moduleDigest(ctx context.Context, row *rowcall.Row) string {
	if row.Type != rowcall.TypeFn || d.Modules == nil {
		return ""
	}
	digest, _ := d.Modules.Digest(ctx, row.Target)
	return digest
}

// Visible reports whether the caller may call key (agent.Scoper): an agent
// offers only rows its caller's token could call (rowcall.Token.MayCall).
func (p parented) Visible(ctx context.Context, key string) bool {
	if p.token == nil {
		return true
	}
	row, err := p.d.Store.Lookup(ctx, key)
	return err == nil && p.token.MayCall(&row)
}
