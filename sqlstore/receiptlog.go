package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"

	"github.com/rowcall/rowcall"
)

// ReceiptLog appends receipts to the signed chain with group commit: callers
// hand receipts to one writer, which takes everything waiting (up to MaxBatch),
// links and signs them in order, and writes them in multi-row INSERT
// statements sized to the backend's bound-parameter limit (Store.MaxParams:
// 100 on D1, far more on SQLite) — each statement atomic, no transaction
// needed. A caller that waits on Append's channel knows its receipt, and every
// receipt queued before it, is stored.
type ReceiptLog struct {
	store  *Store
	signer Signer
	queue  chan pending
	done   chan struct{}
	once   sync.Once

	seq   int64 // the chain's end, owned by the writer goroutine
	hash  string
	know  bool
	stmts map[int]*sql.Stmt // the INSERT for n receipts, prepared once
}

type pending struct {
	rc   rowcall.Receipt
	done chan error
}

// MaxBatch bounds one group commit.
const MaxBatch = 256

// NewReceiptLog starts the writer. Close stops it.
func NewReceiptLog(store *Store, signer Signer) *ReceiptLog {
	l := &ReceiptLog{store: store, signer: signer, queue: make(chan pending, 4*MaxBatch), done: make(chan struct{}), stmts: map[int]*sql.Stmt{}}
	go l.run()
	return l
}

// Append queues rc; the channel receives nil once it is stored, or the error.
func (l *ReceiptLog) Append(rc rowcall.Receipt) <-chan error {
	p := pending{rc: rc, done: make(chan error, 1)}
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
	defer func() {
		for _, s := range l.stmts {
			s.Close()
		}
	}()
	batch := make([]pending, 0, MaxBatch)
	for p := range l.queue {
		batch = append(batch[:0], p)
	fill:
		for len(batch) < MaxBatch {
			select {
			case q, ok := <-l.queue:
				if !ok {
					break fill
				}
				batch = append(batch, q)
			default:
				break fill
			}
		}
		err := l.write(batch)
		for _, q := range batch {
			q.done <- err
		}
	}
}

// write links, signs and stores one batch, in chunks of a power-of-two size
// (so a few prepared statements serve every batch) that fit the backend's
// bound-parameter limit. A chunk that loses the race for the chain's end to
// another process (the unique seq refuses the fork) is re-signed on the new
// end and retried.
func (l *ReceiptLog) write(batch []pending) error {
	ctx := context.Background()
	per := max(1, l.store.maxParams()/len(receiptCols))
	for len(batch) > 0 {
		n := 1
		for n*2 <= min(len(batch), per) {
			n *= 2
		}
		if err := l.writeChunk(ctx, batch[:n]); err != nil {
			return err
		}
		batch = batch[n:]
	}
	return nil
}

func (l *ReceiptLog) writeChunk(ctx context.Context, chunk []pending) error {
	for attempt := 0; ; attempt++ {
		if !l.know {
			var seq sql.NullInt64
			var hash sql.NullString
			err := l.store.DB.QueryRowContext(ctx, `SELECT seq, sha256 FROM receipts WHERE seq = (SELECT MAX(seq) FROM receipts)`).Scan(&seq, &hash)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			l.seq, l.hash, l.know = seq.Int64, hash.String, true
		}
		rcs := make([]*rowcall.Receipt, len(chunk))
		for i := range chunk {
			rcs[i] = &chunk[i].rc
		}
		l.signer.SignChain(rcs, l.seq, l.hash)
		last := rcs[len(rcs)-1]
		seq, hash := last.Seq, last.SHA256
		args := make([]any, 0, len(chunk)*len(receiptCols))
		for _, rc := range rcs {
			args = append(args, receiptArgs(rc)...)
		}
		stmt, err := l.stmt(ctx, len(chunk))
		if err != nil {
			return err
		}
		if _, err = stmt.ExecContext(ctx, args...); err == nil {
			l.seq, l.hash = seq, hash
			return nil
		}
		l.know = false
		if attempt >= 20 || !strings.Contains(err.Error(), "UNIQUE") {
			return err
		}
	}
}

// stmt returns the prepared INSERT for n receipts.
func (l *ReceiptLog) stmt(ctx context.Context, n int) (*sql.Stmt, error) {
	if s, ok := l.stmts[n]; ok {
		return s, nil
	}
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(receiptCols)), ",") + ")"
	q := `INSERT INTO receipts (` + strings.Join(receiptCols, ", ") + `) VALUES ` + strings.TrimSuffix(strings.Repeat(one+",", n), ",")
	s, err := l.store.DB.PrepareContext(ctx, q)
	if err == nil {
		l.stmts[n] = s
	}
	return s, err
}

// receiptCols are the receipts table's columns in the order receiptArgs gives.
var receiptCols = strings.Split(strings.Join(strings.Fields(receiptColumns), ""), ",")

func receiptArgs(r *rowcall.Receipt) []any {
	return []any{r.ID, r.Trace, nullable(r.Parent), r.Actor, r.Key, string(r.Type), r.Runner, r.StartedAt, r.Millis,
		r.OK, r.Material, r.Shape, r.CostUSD, nullInt(r.Status), r.Outcome, r.Input, r.Output, r.Contract, nullable(r.TokenID),
		r.Seq, r.Prev, r.SHA256, r.Sig, r.KeyID}
}
