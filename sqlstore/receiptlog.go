package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
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
// receipt queued before it, is stored. One batch is signed once (package
// ledger: a Merkle root over its receipts).
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
	conn  *sql.Conn         // the writer's own connection: its page cache stays warm
	stmts map[int]*sql.Stmt // the INSERT for n receipts, prepared once on conn
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
	defer l.release()
	batch := make([]pending, 0, MaxBatch)
	for p := range l.queue {
		batch = l.drain(append(batch[:0], p))
		err := l.write(batch)
		for _, q := range batch {
			q.done <- err
		}
	}
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

// write links and signs one batch (one signature for all of it), then stores
// it in as few statements as the backend's bound-parameter limit allows (one
// on SQLite, each statement its own commit; the INSERT for n receipts is
// prepared once per n). When a chunk loses the
// race for the chain's end to another process (the unique seq refuses the
// fork), what is left of the batch is linked and signed again on the new end.
// Receipts already stored keep their signature: their paths still lead to it.
func (l *ReceiptLog) write(batch []pending) error {
	ctx := context.Background()
	per := max(1, l.store.maxParams()/len(receiptCols))
	rcs := make([]*rowcall.Receipt, len(batch))
	for i := range batch {
		rcs[i] = &batch[i].rc
	}
	for attempt := 0; len(rcs) > 0; attempt++ {
		if l.conn == nil {
			c, err := l.store.DB.Conn(ctx)
			if err != nil {
				return err
			}
			l.conn, l.know = c, false
		}
		if !l.know {
			var seq sql.NullInt64
			var hash sql.NullString
			err := l.conn.QueryRowContext(ctx, `SELECT seq, sha256 FROM receipts WHERE seq = (SELECT MAX(seq) FROM receipts)`).Scan(&seq, &hash)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			l.seq, l.hash, l.know = seq.Int64, hash.String, true
		}
		l.signer.SignChain(rcs, l.seq, l.hash)
		for len(rcs) > 0 {
			n := min(len(rcs), per)
			err := l.insert(ctx, rcs[:n])
			if err != nil {
				l.know = false
				if attempt >= 20 || !strings.Contains(err.Error(), "UNIQUE") {
					l.release() // the next batch starts on a fresh connection
					return err
				}
				break
			}
			l.seq, l.hash = rcs[n-1].Seq, rcs[n-1].SHA256
			rcs = rcs[n:]
		}
	}
	return nil
}

// insert stores rcs in one statement.
func (l *ReceiptLog) insert(ctx context.Context, rcs []*rowcall.Receipt) error {
	args := make([]any, 0, len(rcs)*len(receiptCols))
	for _, rc := range rcs {
		args = append(args, receiptArgs(rc)...)
	}
	stmt, err := l.stmt(ctx, len(rcs))
	if err != nil {
		return err
	}
	_, err = stmt.ExecContext(ctx, args...)
	return err
}

// stmt returns the prepared INSERT for n receipts.
func (l *ReceiptLog) stmt(ctx context.Context, n int) (*sql.Stmt, error) {
	if s, ok := l.stmts[n]; ok {
		return s, nil
	}
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(receiptCols)), ",") + ")"
	q := `INSERT INTO receipts (` + strings.Join(receiptCols, ", ") + `) VALUES ` + strings.TrimSuffix(strings.Repeat(one+",", n), ",")
	s, err := l.conn.PrepareContext(ctx, q)
	if err == nil {
		l.stmts[n] = s
	}
	return s, err
}

// release closes the writer's statements and returns its connection.
func (l *ReceiptLog) release() {
	for n, s := range l.stmts {
		s.Close()
		delete(l.stmts, n)
	}
	if l.conn != nil {
		l.conn.Close()
		l.conn = nil
	}
}

// receiptCols are the receipts table's columns in the order receiptArgs gives.
var receiptCols = strings.Split(strings.Join(strings.Fields(receiptColumns), ""), ",")

func receiptArgs(r *rowcall.Receipt) []any {
	return []any{r.ID, r.Trace, nullable(r.Parent), r.Actor, r.Key, string(r.Type), r.Runner, r.StartedAt, r.Millis,
		r.OK, r.Material, r.Shape, r.CostUSD, nullInt(r.Status), r.Outcome, r.Input, r.Output, r.Contract, nullable(r.TokenID),
		r.Seq, r.Prev, r.SHA256, r.Sig, r.KeyID, batchJSON(r.Batch)}
}

func batchJSON(b *rowcall.Batch) any {
	if b == nil {
		return nil
	}
	j, _ := json.Marshal(b)
	return string(j)
}
