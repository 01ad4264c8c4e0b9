// Package dispatch invokes a row by key: it looks the row up, refuses what must
// not run (an unknown key, a disabled row, an open breaker, a call nested too
// deep), hands the call to the runner for the row's type, redacts every
// credential value the runner injected, and writes the engine's receipt — for
// every invocation, nested flow steps and agent tool calls included, linked by
// trace and parent.
package dispatch

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/args"
	"github.com/rowcall/rowcall/redact"
	"github.com/rowcall/rowcall/sqlstore"
)

// MaxDepth bounds nesting: a flow that calls itself ends with a clear error.
const MaxDepth = 8

// Modules resolves the digest of the module an fn row's target names.
type Modules interface {
	Digest(ctx context.Context, target string) (string, error)
}

// Dispatcher runs rows.
type Dispatcher struct {
	Store   *sqlstore.Store
	Runners map[rowcall.Type]rowcall.Runner
	Env     rowcall.Env
	Modules Modules          // optional: fn module digests for the contract fingerprint
	Now     func() time.Time // the clock; time.Now when nil
}

// Request is one top-level call.
type Request struct {
	Key   string
	Body  string
	Shape bool
	Actor string
}

// Result is the answer to a Request.
type Result struct {
	OK      bool            `json:"ok"`
	Ran     bool            `json:"ran"`
	Trace   string          `json:"trace"`
	Result  string          `json:"result"`
	Plan    any             `json:"shape,omitempty"`
	Receipt rowcall.Receipt `json:"-"`
}

// Dispatch runs one top-level call. An unknown key or a disabled row is an
// error (nothing ran, no receipt); anything that reached a runner, or was
// refused at it, is a Result with a receipt.
func (d *Dispatcher) Dispatch(ctx context.Context, req Request) (Result, error) {
	row, err := d.find(ctx, req.Key)
	if err != nil {
		return Result{}, err
	}
	inv := &rowcall.Invocation{Row: &row, Body: req.Body, Shape: req.Shape, Trace: newID("t_", 8)}
	out, ran, rc := d.run(ctx, inv, req.Actor, "")
	return Result{OK: !out.Failed(), Ran: ran && !req.Shape, Trace: inv.Trace, Result: out.Result, Plan: out.Plan, Receipt: rc}, nil
}

// find returns an enabled row, or the seed's unknown_key error with up to three
// did_you_mean keys, or a row_disabled error.
func (d *Dispatcher) find(ctx context.Context, key string) (rowcall.Row, error) {
	row, err := d.Store.Lookup(ctx, key)
	if rowcall.ErrorCode(err) == rowcall.ENotFound {
		keys, _ := d.Store.Keys(ctx)
		return row, &rowcall.Error{Code: rowcall.EUnknownKey, Message: "no row has the key " + key,
			HowToFix: "use a did_you_mean entry, or GET /api/dispatch?ask=<plain words>",
			Extra:    map[string]any{"attempted": key, "ran": false, "did_you_mean": Suggest(key, keys, 3)}}
	}
	if err != nil {
		return row, err
	}
	if row.Enabled == 0 {
		return row, &rowcall.Error{Code: rowcall.EDisabled, Message: key + " is disabled (enabled = 0), so it does not run",
			HowToFix: `enable it with PATCH /api/directory/` + key + ` {"enabled":1}`, Extra: map[string]any{"key": key, "ran": false}}
	}
	return row, nil
}

// Call runs a nested call (a flow step, an agent's tool call) on behalf of
// parent: same trace and actor, one level deeper, its own receipt.
func (d *Dispatcher) call(ctx context.Context, parent *rowcall.Invocation, actor, parentID, key, body string) rowcall.Output {
	if parent.Depth+1 > MaxDepth {
		return rowcall.Output{Result: fmt.Sprintf("ERR:dispatch:depth_exceeded:%d — calls nest at most %d deep; check for a flow that calls itself", parent.Depth+1, MaxDepth)}
	}
	row, err := d.find(ctx, key)
	if err != nil {
		return rowcall.Output{Result: "ERR:" + string(rowcall.ErrorCode(err)) + ":" + key}
	}
	inv := &rowcall.Invocation{Row: &row, Body: body, Trace: parent.Trace, Depth: parent.Depth + 1}
	out, _, _ := d.run(ctx, inv, actor, parentID)
	return out
}

// run executes inv with its row's runner and writes its receipt. ran reports
// whether the runner was reached (not refused before it).
func (d *Dispatcher) run(ctx context.Context, inv *rowcall.Invocation, actor, parentID string) (out rowcall.Output, ran bool, rc rowcall.Receipt) {
	start := d.now()
	id := newID("inv_", 10)
	inv.Args = args.Split(inv.Body)
	inv.Env = d.Env
	inv.Calls = caller{d: d, actor: actor, parentID: id}
	row := inv.Row

	out, ran = d.execute(ctx, inv, start)
	out.Result = redact.String(out.Result, out.Secrets)

	module := ""
	if row.Type == rowcall.TypeFn && d.Modules != nil {
		module, _ = d.Modules.Digest(ctx, row.Target)
	}
	rc = rowcall.Receipt{
		ID: id, Trace: inv.Trace, Parent: parentID, Actor: actor, Key: row.Key, Type: row.Type, Runner: row.RunnerName(),
		StartedAt: start.UTC().Format(sqlstore.Timestamp), Millis: float64(d.now().Sub(start).Microseconds()) / 1000,
		OK: !out.Failed(), Material: out.Material && !inv.Shape, Shape: inv.Shape, CostUSD: out.CostUSD, Status: out.Status,
		Outcome: outcome(out), Input: rowcall.Fingerprint([]byte(inv.Body)), Output: rowcall.Fingerprint([]byte(out.Result)),
		Contract: rowcall.ContractFingerprint(row, module),
	}
	if err := d.Store.PutReceipt(context.WithoutCancel(ctx), &rc); err != nil {
		out.Result = "ERR:receipt:" + err.Error()
		rc.ID = ""
	}
	return out, ran, rc
}

// execute checks the breaker, runs the runner and feeds the breaker.
func (d *Dispatcher) execute(ctx context.Context, inv *rowcall.Invocation, now time.Time) (rowcall.Output, bool) {
	row := inv.Row
	runner, ok := d.Runners[row.Type]
	if !ok {
		return rowcall.Output{Result: fmt.Sprintf("ERR:%s:no_runner — this host has no runner for %s rows", row.Type, row.Type)}, false
	}
	failures := 0
	if !inv.Shape {
		n, open, err := d.Store.Breaker(ctx, row.Key, now)
		failures = n
		if err != nil {
			return rowcall.Output{Result: "ERR:breaker:" + err.Error()}, false
		}
		if open {
			return rowcall.Output{Result: "ERR:breaker_open:" + row.Key + " — 8 consecutive auth failures; credential is dead until replaced."}, false
		}
	}
	out := runner.Run(ctx, inv)
	// Only an auth failure, or the first answer after one, writes breaker state.
	if failed := out.Status == 401 || out.Status == 403; !inv.Shape && out.Status != 0 && (failed || failures > 0) {
		d.Store.RecordAuth(context.WithoutCancel(ctx), row.Key, failed, d.now())
	}
	return out, true
}

// outcome is the receipt's short outcome: "ok", or the failure's code (its
// first three ':'-separated parts, e.g. ERR:http:401), never the body.
func outcome(out rowcall.Output) string {
	if !out.Failed() {
		return "ok"
	}
	parts := strings.SplitN(out.Result, ":", 4)
	code := strings.Join(parts[:min(3, len(parts))], ":")
	if i := strings.IndexAny(code, " —"); i > 0 {
		code = code[:i]
	}
	return code
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// caller adapts the dispatcher to rowcall.Caller for one invocation's nested
// calls.
type caller struct {
	d        *Dispatcher
	actor    string
	parentID string
}

func (c caller) Call(ctx context.Context, parent *rowcall.Invocation, key, body string) rowcall.Output {
	return c.d.call(ctx, parent, c.actor, c.parentID, key, body)
}

const idAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// newID returns prefix followed by n random base-36 characters (inv_c23irnzhx1).
func newID(prefix string, n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return prefix + string(b)
}
