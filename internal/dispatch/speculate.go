package dispatch

import (
	"context"
	"errors"

	"github.com/rowcall/rowcall"
)

// speculate runs req on the cached entry of its row when Speculate allows it
// (see the field): an enabled fn row the caller may call, cached under the
// event id last seen, with a look at the event log due. It waits for the
// receipt, which is stored only if that id is still the newest; ok is false
// when it did not apply or the row changed (ErrStale), and the call is then
// dispatched as usual, looking at the event log first.
func (d *Dispatcher) speculate(ctx context.Context, req Request) (res Result, err error, ok bool) {
	if !d.Speculate || req.Shape || req.payer() != nil && req.payer().Limits.Metered() { // a run thrown away would still have taken a call
		return Result{}, nil, false
	}
	now := d.now()
	event, ok := d.fresh.speculable(d.Fresh, now)
	if !ok {
		return Result{}, nil, false
	}
	e, hit := d.cache.get(event, req.Key)
	if !hit || e.row.Type != rowcall.TypeFn || e.row.Enabled == 0 || (req.Token != nil && !req.Token.Covers(&e.row)) ||
		rowcall.ApprovalWhy(&e.row, req.Token) != "" { // a run thrown away would have used its approval
		return Result{}, nil, false
	}
	res, err = d.top(ctx, req, e.looked(now), &event)
	if err == nil {
		err = res.Wait()
		res.stored = nil // waited for here: Wait has nothing left to wait for
	}
	if errors.Is(err, rowcall.ErrStale) {
		d.Touch() // known old: the usual path must look, whatever Fresh says
		return Result{}, nil, false
	}
	return res, err, true
}
