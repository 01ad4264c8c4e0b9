package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rowcall/rowcall"
)

// ReceiptLog appends receipts to the signed chain with group commit: callers
// hand receipts to one writer, which takes everything waiting (up to MaxBatch,
// after letting the calls that are ready to run queue theirs), links and signs
// them in order, and writes them in multi-row INSERT statements sized to the
// backend's bound-parameter limit (Store.MaxParams: 100 on D1, far more on
// SQLite) — each statement atomic, no transaction needed. A caller that waits
// on Append's channel knows its receipt, and every receipt queued before it, is
// stored. One batch is signed once (package ledger: a Merkle root over its
// receipts).
type ReceiptLog struct {
	store  *Store
	signer Signer
	queue  chan pending
	done   chan struct{}
	once   sync.Once

	// Owned by the writer goroutine:
	seq   int64 // the chain's end
	hash  string
	know  bool
	conn  *sql.Conn                // the writer's own connection: its page cache stays warm
	turn  string                   // the chain's turn, while this writer holds it: its receipt_turn row's holder
	stmts map[insertKind]*sql.Stmt // prepared once on conn
	head  *sql.Stmt                // the event log's newest id (lastEventSQL), prepared on conn

	observer atomic.Pointer[func(Group)]                                     // Observe's; called by the writer after each group
	idle     atomic.Pointer[func(head func(context.Context) (int64, error))] // OnIdle's
}

type pending struct {
	rc     rowcall.Receipt
	done   chan error
	cond   condition
	err    error
	queued time.Time // when Append took it: the caller's wait runs from here
}

// condition is AppendIf's: store only while the event log's newest id is
// event.
type condition struct {
	set   bool
	event int64
}

// insertKind names a prepared INSERT: n receipts, with or without a
// condition, and shared: the receipts agree on every sharedCols column (one
// group of one row's calls, as a busy host writes), so those values are bound
// once (sharedValues) and not for every receipt; turn: the writer holds the
// chain's turn, so the INSERT does not look whether another writer does.
type insertKind struct {
	n      int
	cond   bool
	shared bool
	turn   bool
}

// MaxBatch bounds one group commit.
const MaxBatch = 256

// NewReceiptLog starts the writer. Close stops it.
func NewReceiptLog(store *Store, signer Signer) *ReceiptLog {
	l := &ReceiptLog{store: store, signer: signer, queue: make(chan pending, 4*MaxBatch), done: make(chan struct{}), stmts: map[insertKind]*sql.Stmt{}}
	go l.run()
	return l
}

// Append queues rc; the channel receives nil once it is stored, or the error.
func (l *ReceiptLog) Append(rc rowcall.Receipt) <-chan error {
	return l.append(rc, condition{})
}

// AppendIf queues rc to be stored only if the event log's newest id is still
// event when it is written: checked by the INSERT itself, so nothing can
// change the directory in between. Otherwise the channel receives rowcall.ErrStale and
// the chain is as if rc never came.
func (l *ReceiptLog) AppendIf(rc rowcall.Receipt, event int64) <-chan error {
	return l.append(rc, condition{set: true, event: event})
}

func (l *ReceiptLog) append(rc rowcall.Receipt, cond condition) <-chan error {
	p := pending{rc: rc, done: make(chan error, 1), cond: cond, queued: time.Now()}
	l.queue <- p
	return p.done
}

// Close writes what is queued and stops the writer.
func (l *ReceiptLog) Close() {
	l.once.Do(func() { close(l.queue) })
	<-l.done
}

func (l *ReceiptLog) run() {
	defer close(l.done)
	defer l.release()
	batch := make([]pending, 0, MaxBatch)
	for p := range l.queue {
		batch = l.gather(l.drain(append(batch[:0], p)))
		// Receipts under one condition (or none) in a row are one group: signed
		// together and stored by the same statements.
		for rest := batch; len(rest) > 0; {
			n := 1
			for n < len(rest) && rest[n].cond == rest[0].cond {
				n++
			}
			start := time.Now()
			l.write(rest[:n])
			l.observed(rest[:n], time.Since(start))
			rest = rest[n:]
		}
		for _, q := range batch {
			q.done <- q.err
		}
		l.giveBack(context.Background()) // once its callers are answered
		if f := l.idle.Load(); f != nil && len(l.queue) == 0 && l.conn != nil {
			runtime.Gosched() // the callers just answered run first: a sent-to goroutine waits for its sender's turn to end
			(*f)(l.lastEvent)
		}
	}
}

// OnIdle has the writer call f whenever it has stored every receipt queued
// and finds none waiting: its callers are answered, and f may read the event
// log's newest id (as Store.LastEvent) with head, on the writer's own
// connection, whose page cache its own commits leave warm (a read through
// the pool starts cold after every commit). f runs on the writer goroutine,
// so a receipt queued meanwhile waits for it: it must be quick. nil stops it.
func (l *ReceiptLog) OnIdle(f func(head func(context.Context) (int64, error))) {
	if f == nil {
		l.idle.Store(nil)
		return
	}
	l.idle.Store(&f)
}

// lastEvent is Store.LastEvent on the writer's connection.
func (l *ReceiptLog) lastEvent(ctx context.Context) (int64, error) {
	if l.head == nil {
		s, err := l.conn.PrepareContext(ctx, `SELECT `+lastEventSQL)
		if err != nil {
			return 0, err
		}
		l.head = s
	}
	var id int64
	err := l.head.QueryRowContext(ctx).Scan(&id)
	return id, err
}

// drain adds whatever is queued, up to MaxBatch, without waiting.
func (l *ReceiptLog) drain(batch []pending) []pending {
	for len(batch) < MaxBatch {
		select {
		case q, ok := <-l.queue:
			if !ok {
				return batch
			}
			batch = append(batch, q)
		default:
			return batch
		}
	}
	return batch
}

// gather lets the calls that are ready to run go first, as long as that brings
// more receipts: under load, one commit and one signature then cover many
// calls; a lone caller costs one yield.
func (l *ReceiptLog) gather(batch []pending) []pending {
	for len(batch) < MaxBatch {
		n := len(batch)
		runtime.Gosched()
		if batch = l.drain(batch); len(batch) == n {
			break
		}
	}
	return batch
}

// write links and signs one group (one signature for all of it), then stores
// it in as few statements as the backend's bound-parameter limit allows (one
// on SQLite; each statement its own commit), setting each pending's err. When a
// statement loses the race for the chain's end to another process, what is
// left is linked and signed again on the new end; when a condition no longer
// holds, what is left is rowcall.ErrStale. Receipts already stored keep their
// signature: their paths still lead to it.
//
// The writer knows the chain's end from its own last write, so it learns that
// another process wrote since only from its statement: refused by the unique
// seq, or storing nothing because its first seq is not past the last sealed
// one (stmt). A statement that stored nothing has lost the race if the
// chain's end, read again, moved; else its condition no longer held
// (rowcall.ErrStale), the table ends below its sealed segments, or another
// writer holds the chain's turn (unmoved).
//
// The turn keeps a writer that keeps losing from starving: another writer that
// knows the end from its own last write is a round trip ahead of one that
// must read it again, and while it has receipts to write, it wins again and
// again. So a writer that loses the race takes the turn (one row in
// receipt_turn), reading the end in the same statement; while that row is
// there, every other writer's INSERT stores nothing, so the holder's next one
// links to an end no one else can move. The others wait for it (awaitTurn),
// then link to the end it leaves; it gives the turn back once its callers are
// answered. A refused seq is looked into (landed, taken) only after a
// statement of the group's failed otherwise: else it is a race lost, and
// costs one statement, the turn's.
//
// Any other failure (a lost connection, an expired libSQL stream, a restarted
// server) drops the writer's connection and tries again on a fresh one, up to
// maxLost times in a row. A statement whose answer was lost may still have
// been stored, so before trying again the writer looks its first receipt up
// (by id, trace, key and start: another call's receipt with the same id is not
// it): if it is there, the statement committed and is not sent again. So a
// receipt is never stored twice, no caller is told that a stored receipt
// failed, and none that an unstored one was stored. A receipt whose id another
// stored receipt has (the ids' random part collided) fails alone; the rest of
// its group is linked again and stored.
func (l *ReceiptLog) write(group []pending) {
	ctx := context.Background()
	cond := group[0].cond
	per := max(1, (l.store.maxParams()-tailParams)/len(receiptCols))
	rcs := make([]*rowcall.Receipt, len(group))
	for i := range group {
		rcs[i] = &group[i].rc
	}
	// fail ends every receipt not yet stored with err (rcs: the group's
	// receipts still to store, in order, less any already failed).
	fail := func(err error) {
		left := make(map[*rowcall.Receipt]bool, len(rcs))
		for _, rc := range rcs {
			left[rc] = true
		}
		for i := range group {
			if left[&group[i].rc] {
				group[i].err = err
			}
		}
	}
	start, races, lostRun, doubt, waited := time.Now(), 0, 0, false, false
	var waiting turnWait
	// over fails what is left once the group has been linking again for
	// raceFor, and says so.
	over := func() bool {
		if time.Since(start) <= raceFor {
			return false
		}
		fail(&rowcall.Error{Code: rowcall.EInternal,
			Message:  fmt.Sprintf("other writers of the receipt chain took its end %d times in %s: nothing was stored for this call", races, raceFor),
			HowToFix: "call again; if this persists, fewer hosts or workers should write to this database at once"})
		return true
	}
	// raced counts a race lost to another writer and says whether to link
	// again or to give up. The writer takes the chain's turn first, if no one
	// holds it — unless it lost to the holder it had waited for: a statement
	// linked before that holder wrote is bound to lose.
	raced := func() (again bool) {
		if races++; over() {
			return false
		}
		if !waited && l.turn == "" {
			l.takeTurn(ctx)
		}
		waited = false
		return true
	}
	// lost drops the writer's connection after err and says whether to try
	// again (on a fresh one, after a pause) or to give up.
	lost := func(err error) (again bool) {
		l.release()
		if lostRun++; lostRun > maxLost {
			fail(err)
			return false
		}
		time.Sleep(time.Duration(lostRun) * 50 * time.Millisecond)
		return true
	}
	for len(rcs) > 0 {
		if err := l.chainEnd(ctx); err != nil {
			if !lost(err) {
				return
			}
			continue
		}
		l.signer.SignChain(rcs, l.seq, l.hash)
		for len(rcs) > 0 {
			n := min(len(rcs), per)
			stored, err := l.insert(ctx, rcs[:n], cond)
			if err != nil {
				l.know = false
				unique := strings.Contains(err.Error(), "UNIQUE")
				if unique && !doubt && strings.Contains(err.Error(), "receipts.seq") {
					// Refused for its seq while no statement of the group's has
					// failed otherwise, so none can have been stored unseen: a
					// race lost, with nothing to look up.
					if !raced() {
						return
					}
					break
				}
				if landed, lerr := l.landed(ctx, rcs[0]); lerr == nil && landed {
					// The answer was lost, not the statement (an earlier try's,
					// or this one's): those receipts are stored; link the rest
					// to the end as it now is.
					rcs, lostRun = rcs[n:], 0
					break
				}
				if unique {
					if taken, terr := l.taken(ctx, rcs[:n]); terr == nil && len(taken) > 0 {
						// An id another receipt already has (ids are random: a
						// collision, not a race): that call fails, the rest relink.
						rcs = slices.DeleteFunc(rcs, func(rc *rowcall.Receipt) bool {
							if !taken[rc.ID] {
								return false
							}
							for i := range group {
								if &group[i].rc == rc {
									group[i].err = fmt.Errorf("receipt id %s is already another receipt's: nothing was stored for this call; call again", rc.ID)
								}
							}
							return true
						})
						break
					}
					if !raced() {
						return
					}
					break // another writer took the end: link again
				}
				doubt = true
				if !lost(err) {
					return
				}
				break
			}
			if !stored {
				seq, hash := l.seq, l.hash
				l.know = false
				if err := l.chainEnd(ctx); err != nil {
					if !lost(err) {
						return
					}
					break
				}
				if l.seq != seq || l.hash != hash {
					// Another writer took the end (the turn's holder, or past a
					// pruned seq): link again.
					if over() {
						return
					}
					break
				}
				holder, err := l.unmoved(ctx, cond)
				if err != nil {
					fail(err)
					return
				}
				if over() {
					return
				}
				l.awaitTurn(ctx, holder, &waiting)
				waited = true
				continue // the same receipts again: they still link to the end
			}
			lostRun, waited = 0, false
			l.seq, l.hash = rcs[n-1].Seq, rcs[n-1].SHA256
			rcs = rcs[n:]
		}
	}
}

// raceFor bounds how long one group keeps relinking after losing the chain's
// end to another writer; maxLost how often in a row the writer starts on a
// fresh connection after a failure; turnFor how long a turn may stand while
// the chain's end does not move before the writers waiting on it end it (its
// holder is gone or stuck).
const (
	raceFor = 10 * time.Second
	maxLost = 3
	turnFor = 2 * time.Second
)

// turnFreeSQL holds while no writer holds the chain's turn: an empty table,
// so no row read.
const turnFreeSQL = `NOT EXISTS (SELECT 1 FROM receipt_turn)`

// takeTurn takes the chain's turn if no writer holds it, and with it the
// chain's end as it is once no one else can move it (read by the same
// statement). Failing to take it is no error: the writer races on, or waits
// for the holder.
func (l *ReceiptLog) takeTurn(ctx context.Context) {
	if l.conn == nil {
		return
	}
	holder := strconv.FormatUint(rand.Uint64(), 36)
	var seq sql.NullInt64
	var hash string
	err := l.conn.QueryRowContext(ctx, `INSERT INTO receipt_turn (one, holder) VALUES (1, ?) ON CONFLICT DO NOTHING
		RETURNING (SELECT MAX(seq) FROM receipts), (SELECT sha256 FROM receipts WHERE seq = (SELECT MAX(seq) FROM receipts))`, holder).Scan(&seq, hexCol{&hash})
	if err == nil {
		l.turn, l.seq, l.hash, l.know = holder, seq.Int64, hash, true
	}
}

// giveBack ends the writer's turn, if it holds it. When that fails (a lost
// connection), the writers waiting on the turn end it after turnFor.
func (l *ReceiptLog) giveBack(ctx context.Context) {
	if l.turn == "" {
		return
	}
	const q = `DELETE FROM receipt_turn WHERE holder = ?`
	if l.conn != nil {
		l.conn.ExecContext(ctx, q, l.turn)
	} else {
		l.store.DB.ExecContext(ctx, q, l.turn)
	}
	l.turn = ""
}

// turnWait is what a writer waiting on another's turn has seen: the turn's
// holder, the chain's end then and since when, and how often it has waited.
type turnWait struct {
	holder string
	seq    int64
	since  time.Time
	waits  int
}

// awaitTurn gives way to holder, the writer that holds the chain's turn
// ("": it has just given it back, so the INSERT is tried again at once): a
// jittered pause that grows with each wait, up to 16 ms. A turn that has stood
// for turnFor with the chain's end where it was, its holder gone or stuck, is
// ended.
func (l *ReceiptLog) awaitTurn(ctx context.Context, holder string, w *turnWait) {
	if holder == "" {
		return
	}
	if holder != w.holder || l.seq != w.seq {
		w.holder, w.seq, w.since = holder, l.seq, time.Now()
	} else if time.Since(w.since) > turnFor {
		l.conn.ExecContext(ctx, `DELETE FROM receipt_turn WHERE holder = ?`, holder)
		return
	}
	w.waits++
	time.Sleep(time.Duration(rand.Int64N(int64(min(w.waits, 16)) * int64(time.Millisecond))))
}

// landed reports whether rc itself is stored: then the statement that
// carried it committed although its answer was lost (one statement stores all
// its receipts or none). A row with rc's id but another call's trace, key or
// start is not rc (an id collision), so rc is not stored. It reads through
// the pool, not the writer's connection.
func (l *ReceiptLog) landed(ctx context.Context, rc *rowcall.Receipt) (bool, error) {
	var one int
	err := l.store.DB.QueryRowContext(ctx, `SELECT 1 FROM receipts WHERE id = ? AND trace = ? AND key = ? AND started_at = ?`,
		rc.ID, rc.Trace, rc.Key, rc.StartedAt).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// taken returns which of rcs's ids a stored receipt already has.
func (l *ReceiptLog) taken(ctx context.Context, rcs []*rowcall.Receipt) (map[string]bool, error) {
	args := make([]any, len(rcs))
	for i, rc := range rcs {
		args[i] = rc.ID
	}
	ids, err := queryAll(ctx, l.store, func(sc scanner) (id string, err error) { return id, sc.Scan(&id) },
		`SELECT id FROM receipts WHERE id IN (?`+strings.Repeat(",?", len(rcs)-1)+`)`, args...)
	taken := map[string]bool{}
	for _, id := range ids {
		taken[id] = true
	}
	return taken, err
}

// unmoved is why a statement that linked to the chain's end as it still is
// stored nothing, read in one statement: the table ends below its last sealed
// segment — its newest receipts were deleted, and no receipt can be linked to
// what is left; or cond no longer held (rowcall.ErrStale); else another
// writer held the chain's turn, and holder is who holds it now ("" if no one
// does any more).
func (l *ReceiptLog) unmoved(ctx context.Context, cond condition) (holder string, err error) {
	var last, event int64
	var turn sql.NullString
	err = l.conn.QueryRowContext(ctx, `SELECT `+sealedSQL+`, `+lastEventSQL+`, (SELECT holder FROM receipt_turn)`).Scan(&last, &event, &turn)
	switch {
	case err != nil:
		return "", err
	case last > l.seq:
		return "", &rowcall.Error{Code: rowcall.EInternal,
			Message:  fmt.Sprintf("the receipts table ends at seq %d, below its last sealed segment (seq %d): its newest receipts were deleted, so no receipt can be linked to the chain's end", l.seq, last),
			HowToFix: "restore the receipts table from a backup copy that holds the chain up to its last sealed segment (receipt_segments)"}
	case cond.set && event != cond.event:
		return "", rowcall.ErrStale
	}
	return turn.String, nil
}

// chainEnd makes sure the writer has its connection and knows the chain's end.
func (l *ReceiptLog) chainEnd(ctx context.Context) error {
	if l.conn == nil {
		c, err := l.store.DB.Conn(ctx)
		if err != nil {
			return err
		}
		l.conn, l.know = c, false
	}
	if l.know {
		return nil
	}
	seq, hash, err := chainHead(ctx, l.conn)
	if err != nil {
		return err
	}
	l.seq, l.hash, l.know = seq, hash, true
	return nil
}

// insert stores rcs in one statement; stored is false when nothing was
// written: rcs[0].Seq is not past the last sealed segment (stmt), or cond no
// longer held.
func (l *ReceiptLog) insert(ctx context.Context, rcs []*rowcall.Receipt, cond condition) (stored bool, err error) {
	k := insertKind{n: len(rcs), cond: cond.set, shared: sharing(rcs), turn: l.turn != ""}
	args := make([]any, 0, len(rcs)*len(receiptCols)+tailParams)
	size := 0
	for _, rc := range rcs {
		size += receiptBlobs(rc)
	}
	blobs := make([]byte, 0, size) // every receipt's hashes and batch, in one allocation
	for i, rc := range rcs {
		var prev *rowcall.Receipt
		if i > 0 {
			prev = rcs[i-1]
		}
		args = appendReceiptArgs(args, &blobs, rc, prev)
	}
	first := args[colSeq] // rcs[0].Seq, boxed once
	if k.shared {
		args = sharedValues(args, k.n)
	}
	args = append(args, first)
	if cond.set {
		args = append(args, cond.event)
	}
	stmt, err := l.stmt(ctx, k)
	if err != nil {
		return false, err
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// stmt returns a prepared INSERT. It selects its rows (selectSQL) only
// while the parameter after them, its first receipt's seq, is past the last
// sealed segment, while no other writer holds the chain's turn (unless this
// one does), and, for a conditional one, while the event log's newest id is
// the last parameter: all of its rows or none. The unique seq refuses a
// receipt linked to an end another writer has since moved past only while
// that writer's receipt at the seq is in the table; Archive.Prune deletes
// sealed receipts, so a stale writer's end may be followed by a pruned seq,
// and without the first condition its receipt would be stored there, outside
// the chain the segments hold. At most maxStmts are kept (one per group size
// seen): past that they start over.
func (l *ReceiptLog) stmt(ctx context.Context, k insertKind) (*sql.Stmt, error) {
	if s, ok := l.stmts[k]; ok {
		return s, nil
	}
	if len(l.stmts) >= maxStmts {
		l.closeStmts()
	}
	cols, rows := selectSQL(k)
	q := `INSERT INTO receipts (` + cols + `) ` + rows + ` WHERE ? > ` + sealedSQL
	if !k.turn {
		q += ` AND ` + turnFreeSQL
	}
	if k.cond {
		q += ` AND ` + lastEventSQL + ` = ?`
	}
	s, err := l.conn.PrepareContext(ctx, q)
	if err == nil {
		l.stmts[k] = s
	}
	return s, err
}

// selectSQL is the column list and the SELECT of k's INSERT, its receipts'
// values: SELECT ?, … for one receipt, SELECT * FROM (VALUES (?, …), …) for
// several (D1 counts rows read for a one-row VALUES list that a plain SELECT
// does not: docs/d1.md). Each row is a ? for each of a receipt's values, in
// receiptCols' order; or, when k.shared, the sharedCols first, as ?1… in every
// row (bound once), then the others, each a ? (which SQLite numbers after
// them, in order): sharedValues' order. Only those few are numbered: the
// driver reads every numbered parameter's name back, an allocation each.
func selectSQL(k insertKind) (cols, rows string) {
	names, row := receiptCols, strings.Repeat(",?", len(receiptCols))[1:]
	if k.shared {
		names, row = nil, ""
		for i, c := range sharedCols {
			names, row = append(names, receiptCols[c]), row+"?"+strconv.Itoa(i+1)+","
		}
		for c, name := range receiptCols {
			if !slices.Contains(sharedCols, c) {
				names, row = append(names, name), row+"?,"
			}
		}
		row = strings.TrimSuffix(row, ",")
	}
	if k.n == 1 {
		return strings.Join(names, ", "), `SELECT ` + row
	}
	return strings.Join(names, ", "), `SELECT * FROM (VALUES ` + strings.TrimSuffix(strings.Repeat("("+row+"),", k.n), ",") + `)`
}

// tailParams is how many parameters an INSERT has after its receipts'
// values: the first receipt's seq, and a condition's event.
const tailParams = 2

// sharedCols are the columns a shared INSERT binds once for all its receipts.
var sharedCols = []int{colActor, colKey, colType, colRunner, colContract, colToken, colSig, colKeyID}

// sharing reports whether rcs can be stored by a shared INSERT (insertKind).
func sharing(rcs []*rowcall.Receipt) bool {
	if len(rcs) < 2 {
		return false
	}
	a := rcs[0]
	for _, r := range rcs[1:] {
		if r.Actor != a.Actor || r.Key != a.Key || r.Type != a.Type || r.Runner != a.Runner || r.Contract != a.Contract ||
			r.TokenID != a.TokenID || r.Sig != a.Sig || r.KeyID != a.KeyID {
			return false
		}
	}
	return true
}

// sharedValues orders n receipts' values (appendReceiptArgs') as a shared
// INSERT's parameters: the first receipt's sharedCols values, then each
// receipt's others.
func sharedValues(rows []any, n int) []any {
	w := len(receiptCols)
	out := make([]any, 0, len(sharedCols)+n*(w-len(sharedCols))+tailParams)
	for _, c := range sharedCols {
		out = append(out, rows[c])
	}
	for i := range n {
		for c, v := range rows[i*w : (i+1)*w] {
			if !slices.Contains(sharedCols, c) {
				out = append(out, v)
			}
		}
	}
	return out
}

// maxStmts bounds the prepared INSERTs the writer keeps.
const maxStmts = 64

func (l *ReceiptLog) closeStmts() {
	for k, s := range l.stmts {
		s.Close()
		delete(l.stmts, k)
	}
	if l.head != nil {
		l.head.Close()
		l.head = nil
	}
}

// release closes the writer's statements and returns its connection.
func (l *ReceiptLog) release() {
	l.closeStmts()
	if l.conn != nil {
		l.conn.Close()
		l.conn = nil
	}
}

// receiptCols are the receipts table's columns in the order appendReceiptArgs gives.
var receiptCols = strings.Split(strings.Join(strings.Fields(receiptColumns), ""), ",")

// The places in receiptCols of the columns appendReceiptArgs may carry over,
// and of seq (insert's condition binds the first receipt's again).
var (
	colActor, colKey, colType, colRunner = col("actor"), col("key"), col("type"), col("runner")
	colContract, colToken, colSHA256     = col("contract_sha256"), col("token_id"), col("sha256")
	colSig, colKeyID, colSeq             = col("sig"), col("key_id"), col("seq")
)

func col(name string) int {
	i := slices.Index(receiptCols, name)
	if i < 0 {
		panic("no receipts column " + name)
	}
	return i
}

// appendReceiptArgs appends r's column values to args, in receiptCols' order;
// the bytes of its hashes and batch go to the end of *blobs (values
// sub-slice it; sized by receiptBlobs, it need not grow). prev is the receipt
// whose values end args (nil: none): a value r shares with it is its value
// again, not converted and boxed a second time — a group shares one signature
// and key id, mostly one row, actor and contract, and each receipt's prev is
// the sha256 of the one before.
func appendReceiptArgs(args []any, blobs *[]byte, r, prev *rowcall.Receipt) []any {
	var last []any
	p := &rowcall.Receipt{}
	if prev != nil {
		last, p = args[len(args)-len(receiptCols):], prev
	}
	// carried is column i's value: the previous receipt's when r's is the same, else conv(v).
	carried := func(i int, same bool, v string, conv func(string) any) any {
		if last != nil && same {
			return last[i]
		}
		return conv(v)
	}
	hash := func(s string) any { return hashArg(blobs, s) }
	return append(args, r.ID, r.Trace, nullable(r.Parent), carried(colActor, r.Actor == p.Actor, r.Actor, text),
		carried(colKey, r.Key == p.Key, r.Key, text), carried(colType, r.Type == p.Type, string(r.Type), text),
		carried(colRunner, r.Runner == p.Runner, r.Runner, text), r.StartedAt, r.Millis, r.OK, r.Material, r.Shape, r.CostUSD,
		nullInt(r.Status), r.Outcome, hash(r.Input), hash(r.Output), carried(colContract, r.Contract == p.Contract, r.Contract, hash),
		carried(colToken, r.TokenID == p.TokenID, r.TokenID, nullable), r.Seq,
		carried(colSHA256, r.Prev == p.SHA256, r.Prev, hash), // the previous receipt's own hash
		hash(r.SHA256), carried(colSig, r.Sig == p.Sig, r.Sig, sigArg), carried(colKeyID, r.KeyID == p.KeyID, r.KeyID, text),
		batchArg(blobs, r.Batch), nullable(r.Approval), nullable(r.Approver),
		nullable(r.PersonIssuer), nullable(r.PersonSubject))
}

func text(s string) any { return s }
