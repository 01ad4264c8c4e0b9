package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
)

// looked is what a call needs to know about its row before it runs.
type looked struct {
	row      rowcall.Row
	contract string
	module   string        // an fn row's module digest
	blocks   []rowcall.Row // the rows its includes name (rowcall.Row.IncludeKeys)
	owner    bool          // the row wields the owner key (rowcall.Row.OwnerOnly, parsed once)
	failures int           // consecutive auth failures (the breaker)
	open     bool          // the breaker is open
}

// cache keeps rows and their contract fingerprints between calls. It is valid
// for one value of the event log's newest id: every directory or module change
// writes an event (by trigger, whoever made it), so a call that sees a newer id
// starts a fresh cache and a new or edited row is live on the next call.
type cache struct {
	mu    sync.RWMutex
	event int64
	rows  map[string]entry
}

type entry struct {
	row      rowcall.Row
	contract string
	module   string
	blocks   []rowcall.Row
	owner    bool
	failures int       // the breaker's consecutive auth failures
	opened   time.Time // when the breaker opened; zero when closed
}

// maxCached bounds the cache; past it the cache starts over.
const maxCached = 10_000

func (c *cache) get(event int64, key string) (entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.event != event {
		return entry{}, false
	}
	e, ok := c.rows[key]
	return e, ok
}

func (c *cache) put(event int64, key string, e entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case event < c.event: // read under an older state: do not keep it
		return
	case event > c.event || len(c.rows) >= maxCached:
		c.event, c.rows = event, map[string]entry{}
	}
	c.rows[key] = e
}

// look reads a row, its contract, its module and its breaker: from the cache
// when it is valid for the newest event id, and from the tables when not.
func (d *Dispatcher) look(ctx context.Context, key string, now time.Time) (looked, error) {
	event, err := d.lastEvent(ctx, now)
	if err != nil {
		return looked{}, err
	}
	e, ok := d.cache.get(event, key)
	if !ok {
		row, err := d.Store.Lookup(ctx, key)
		if err != nil {
			return looked{}, err
		}
		failures, opened, err := d.Store.Breaker(ctx, key)
		if err != nil {
			return looked{}, err
		}
		blocks, err := d.blocks(ctx, &row)
		if err != nil {
			return looked{}, err
		}
		module := d.moduleDigest(ctx, &row)
		e = entry{row: row, contract: rowcall.ContractFingerprint(&row, module, blocks), module: module, blocks: blocks, owner: row.OwnerOnly(),
			failures: failures, opened: opened}
		d.cache.put(event, key, e)
	}
	return e.looked(now), nil
}

// Row returns key's row as a call of it would find it now (through the row
// cache: no query while the event log has not moved), when the caller holding
// tok (nil: the owner) may see it; ok is false when no row has the key, it is
// outside tok's scope, or it could not be read (Dispatch then says why). A
// caller that needs the row before dispatching it (MCP makes named arguments
// into a body by the row's schema) reads it here, not from the store.
func (d *Dispatcher) Row(ctx context.Context, key string, tok *rowcall.Token) (row rowcall.Row, ok bool) {
	l, err := d.look(ctx, key, d.now())
	if err != nil || (tok != nil && !tok.Covers(&l.row)) {
		return rowcall.Row{}, false
	}
	return l.row, true
}

// looked is what a call needs from the entry at now.
func (e entry) looked(now time.Time) looked {
	open := !e.opened.IsZero() && now.Sub(e.opened) < rowcall.BreakerCooldown
	return looked{row: e.row, contract: e.contract, module: e.module, blocks: e.blocks, owner: e.owner, failures: e.failures, open: open}
}

// freshness remembers the last event-log check, so calls within Fresh of it
// (and with no Touch since) skip the query. Calls that find it stale at once
// share one query (checking), unless a Touch came after it started.
type freshness struct {
	mu       sync.Mutex
	event    int64
	checked  time.Time
	touched  bool
	checking *check
}

// check is one event-log query that several calls wait for.
type check struct {
	done  chan struct{}
	event int64
	err   error
}

// Touch says this process just changed something a call reads (a row, a
// module, a breaker): the next call checks the event log whatever Fresh says.
func (d *Dispatcher) Touch() {
	d.fresh.mu.Lock()
	d.fresh.touched, d.fresh.checking = true, nil
	d.fresh.mu.Unlock()
}

// speculable returns the event id last seen when a call would have to look at
// the event log before trusting it (Fresh has passed) and may speculate on it
// instead: not before the first look, nor after a Touch (the id is known old).
func (f *freshness) speculable(fresh time.Duration, now time.Time) (event int64, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	due := fresh <= 0 || now.Sub(f.checked) >= fresh
	return f.event, due && !f.touched && !f.checked.IsZero()
}

func (d *Dispatcher) lastEvent(ctx context.Context, now time.Time) (int64, error) {
	f := &d.fresh
	f.mu.Lock()
	if d.Fresh > 0 && !f.touched && now.Sub(f.checked) < d.Fresh {
		event := f.event
		f.mu.Unlock()
		return event, nil
	}
	if c := f.checking; c != nil {
		f.mu.Unlock()
		<-c.done
		return c.event, c.err
	}
	c := f.start()
	f.mu.Unlock()
	d.check(ctx, c, now, d.Store.LastEvent)
	return c.event, c.err
}

// LookAhead makes, with head (a read of the event log's newest id), the look
// a call would make, when the last one is more than half of Fresh old and
// none is under way: so a call that comes soon after (a client's next
// request, once this one is answered) finds a fresh look instead of waiting
// for the query. It is the receipt writer's idle hook
// (sqlstore.ReceiptLog.OnIdle: the writer has stored every receipt queued,
// and reads on its own connection). The look counts from when it began, and
// a call trusts it for Fresh, as lastEvent's. Nothing when Fresh is 0
// (every call looks itself).
func (d *Dispatcher) LookAhead(head func(context.Context) (int64, error)) {
	if d.Fresh <= 0 {
		return
	}
	now := d.now()
	f := &d.fresh
	f.mu.Lock()
	if f.checking != nil || (!f.touched && now.Sub(f.checked) < d.Fresh/2) {
		f.mu.Unlock()
		return
	}
	c := f.start()
	f.mu.Unlock()
	d.check(context.Background(), c, now, head)
}

// start begins a look that calls arriving meanwhile share (f.mu held).
func (f *freshness) start() *check {
	c := &check{done: make(chan struct{})}
	f.touched, f.checking = false, c
	return c
}

// check makes the look c, begun at now, with head, and keeps what it read.
func (d *Dispatcher) check(ctx context.Context, c *check, now time.Time, head func(context.Context) (int64, error)) {
	f := &d.fresh
	// Shared by every call waiting on it: one caller hanging up must not fail the others.
	c.event, c.err = head(context.WithoutCancel(ctx))
	f.mu.Lock()
	if f.checking == c {
		f.checking = nil
	}
	if c.err == nil && c.event >= f.event {
		f.event, f.checked = c.event, now
	}
	f.mu.Unlock()
	close(c.done)
}
