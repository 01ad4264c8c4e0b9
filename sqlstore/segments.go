package sqlstore

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
)

// ObjectStore holds sealed receipt segments, one object per segment, under
// keys like receipts/00000000000000000001-00000000000000010000.jsonl.gz. Its
// implementations: DirObjects (a directory, the host), s3objects.Store (any
// S3-compatible bucket, the host) and the worker's R2 bucket (worker/r2objects.go);
// TestObjectStores runs one suite against each Go one. Put must be atomic (a
// reader sees the whole object or none) and replace an object of the same
// key; Get of a key never put returns an error wrapping ErrObjectNotFound. A
// store need not be trusted: Archive checks every object it reads against
// the SHA-256 the database recorded when it was sealed.
type ObjectStore interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// ErrObjectNotFound is an ObjectStore's answer for a key it does not hold.
var ErrObjectNotFound = errors.New("no such object")

// DirObjects is an ObjectStore in a directory of the local file system.
type DirObjects struct{ Dir string }

// Put writes data to a temporary file and renames it into place.
func (d DirObjects) Put(_ context.Context, key string, data []byte) error {
	path := filepath.Join(d.Dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".segment-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// Get reads one object.
func (d DirObjects) Get(_ context.Context, key string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(d.Dir, filepath.FromSlash(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", filepath.Join(d.Dir, filepath.FromSlash(key)), ErrObjectNotFound)
	}
	return data, err
}

// Archive moves the receipt chain past one database: Seal writes every full
// run of Size receipts not yet sealed to Objects as one segment (gzip JSON
// lines, one receipt each) and records it in receipt_segments with the SHA-256
// of its bytes, the Merkle root over its receipts (ledger.Root), a checkpoint
// signed at its last receipt (ledger.Signer.SignSegment) and a Bloom filter of
// its ids; Prune then deletes sealed receipts older than Retain from the
// receipts table (never the chain's newest, which the writer links to). Set
// Store.Archive and the store reads across both: Receipt finds an archived
// receipt through the filters, Receipts pages through segments and the table
// as one chain. Every segment read is checked against the database's record
// (its bytes' SHA-256, its seq range, its root) before a receipt of it is
// returned. Trace reads the hot table only.
type Archive struct {
	Store   *Store
	Objects ObjectStore
	Signer  *ledger.Signer
	Origin  string        // the chain's name in checkpoints (as /.well-known/rowcall-checkpoint's)
	Size    int           // receipts per segment
	Retain  time.Duration // how long sealed receipts stay in the table

	mu     sync.Mutex
	blooms []segmentIDs // every segment's id filter, by first_seq, loaded as they are sealed
	last   *openSegment // the segment read last (export pages through one at a time)
}

// DefaultSegmentSize is receipts per segment when Archive.Size is 0.
const DefaultSegmentSize = 10000

type segmentIDs struct {
	first, last int64
	ids         *bloom.BloomFilter
}

// segmentRow is the database's record of one segment.
type segmentRow struct {
	First, Last            int64
	Object, ObjectSHA256   string
	Bytes                  int64
	Root, Head, Checkpoint string
}

type openSegment struct {
	row      segmentRow
	receipts []rowcall.Receipt
}

const segmentColumns = `first_seq, last_seq, object, object_sha256, bytes, root, head, checkpoint`

func scanSegment(sc scanner) (segmentRow, error) {
	var r segmentRow
	err := sc.Scan(&r.First, &r.Last, &r.Object, &r.ObjectSHA256, &r.Bytes, &r.Root, &r.Head, &r.Checkpoint)
	return r, err
}

func (a *Archive) size() int {
	if a.Size > 0 {
		return a.Size
	}
	return DefaultSegmentSize
}

// Sealed is the last seq in a sealed segment (0: none).
func (a *Archive) Sealed(ctx context.Context) (int64, error) {
	return sealed(ctx, a.Store.DB)
}

// sealedSQL is the last seq in a sealed segment (0: none), one entry of
// receipt_segments' index on last_seq.
const sealedSQL = `(SELECT COALESCE(MAX(last_seq), 0) FROM receipt_segments)`

func sealed(ctx context.Context, q rowQuerier) (int64, error) {
	var last int64
	err := q.QueryRowContext(ctx, `SELECT `+sealedSQL).Scan(&last)
	return last, err
}

// Seal writes every full segment the table holds past the last sealed one
// and returns how many it sealed.
func (a *Archive) Seal(ctx context.Context) (int, error) {
	n := 0
	for {
		sealed, err := a.Sealed(ctx)
		if err != nil {
			return n, err
		}
		rs, err := a.Store.receipts(ctx, `WHERE seq > ? ORDER BY seq LIMIT ?`, sealed, a.size())
		if err != nil || len(rs) < a.size() {
			return n, err
		}
		if err := a.seal(ctx, sealed, rs); err != nil {
			return n, err
		}
		n++
	}
}

// seal writes rs (the receipts after seq sealed) as one segment.
func (a *Archive) seal(ctx context.Context, sealed int64, rs []rowcall.Receipt) error {
	first, last := rs[0].Seq, rs[len(rs)-1].Seq
	if first != sealed+1 || last-first+1 != int64(len(rs)) {
		return fmt.Errorf("receipt segments: cannot seal after seq %d: the table holds seq %d to %d in %d rows — receipts are missing", sealed, first, last, len(rs))
	}
	if sealed > 0 {
		var head string
		if err := a.Store.DB.QueryRowContext(ctx, `SELECT head FROM receipt_segments WHERE last_seq = ?`, sealed).Scan(&head); err != nil {
			return err
		}
		if rs[0].Prev != head {
			return fmt.Errorf("receipt segments: receipt seq %d (%s) does not link to the sealed segment before it (prev_sha256 %s, segment head %s)", first, rs[0].ID, rs[0].Prev, head)
		}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	enc := json.NewEncoder(zw)
	hashes := make([]string, len(rs))
	ids := bloom.NewWithEstimates(uint(len(rs)), 0.01)
	for i := range rs {
		if err := enc.Encode(&rs[i]); err != nil {
			return err
		}
		hashes[i] = rs[i].SHA256
		ids.AddString(rs[i].ID)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	seg := ledger.Segment{First: first, Last: last, Root: ledger.Root(hashes), Object: hex.EncodeToString(sum[:])}
	cp, err := a.Signer.SignSegment(ledger.Checkpoint{Origin: a.Origin, Size: last, Head: rs[len(rs)-1].SHA256}, seg)
	if err != nil {
		return err
	}
	filter, err := ids.MarshalBinary()
	if err != nil {
		return err
	}
	key := fmt.Sprintf("receipts/%020d-%020d.jsonl.gz", first, last)
	if err := a.Objects.Put(ctx, key, buf.Bytes()); err != nil {
		return fmt.Errorf("receipt segments: write %s: %w", key, err)
	}
	// Another host sealing the same run writes the same bytes; the first row stays.
	_, err = a.Store.DB.ExecContext(ctx, `INSERT INTO receipt_segments (`+segmentColumns+`, ids, sealed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		first, last, key, seg.Object, buf.Len(), seg.Root, rs[len(rs)-1].SHA256, string(cp), filter, a.Store.now())
	return err
}

// Prune deletes, in runs of pruneRun, the receipts that are sealed, started
// before Retain ago and are not the chain's newest; it returns how many. A
// token's receipt that cost something stays while its UTC month lasts,
// whatever Retain says: tokens' USD budgets are summed from the table
// (Store.Spent), so pruning it would give its cost back to the token. A
// writer that missed what was sealed and pruned (another host's receipts
// after its own last one) does not take a pruned seq: a receipt INSERT
// stores nothing at a sealed seq, and the writer links again to the chain's
// end (ReceiptLog.stmt).
func (a *Archive) Prune(ctx context.Context) (int64, error) {
	now := time.Now
	if a.Store.Now != nil {
		now = a.Store.Now
	}
	at := now()
	cutoff := at.Add(-a.Retain).UTC().Format(rowcall.Timestamp)
	month := rowcall.Month(at).UTC().Format(rowcall.Timestamp)
	sealed, err := a.Sealed(ctx)
	if err != nil || sealed == 0 {
		return 0, err
	}
	head, _, err := chainHead(ctx, a.Store.DB)
	if err != nil {
		return 0, err
	}
	var total int64
	for {
		res, err := a.Store.DB.ExecContext(ctx, `DELETE FROM receipts WHERE seq IN (
			SELECT seq FROM receipts WHERE seq <= ? AND seq < ? AND started_at < ?
				AND (token_id IS NULL OR COALESCE(cost_usd, 0) = 0 OR started_at < ?) ORDER BY seq LIMIT ?)`,
			sealed, head, cutoff, month, pruneRun)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if total += n; err != nil || n < pruneRun {
			return total, err
		}
	}
}

// pruneRun bounds one DELETE (D1 bounds a statement's time).
const pruneRun = 5000

// Run seals and prunes every period until ctx ends, logging failures to
// report (a failed seal is tried again next period; nothing is pruned that is
// not sealed).
func (a *Archive) Run(ctx context.Context, period time.Duration, report func(error)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if _, err := a.Seal(ctx); err != nil {
			report(err)
		} else if _, err := a.Prune(ctx); err != nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// segment returns the segment holding seq (nil when none does), read and
// checked against the database's record.
func (a *Archive) segment(ctx context.Context, seq int64) (*openSegment, error) {
	a.mu.Lock()
	if s := a.last; s != nil && s.row.First <= seq && seq <= s.row.Last {
		a.mu.Unlock()
		return s, nil
	}
	a.mu.Unlock()
	row, err := scanSegment(a.Store.DB.QueryRowContext(ctx, `SELECT `+segmentColumns+` FROM receipt_segments
		WHERE first_seq <= ? AND last_seq >= ? ORDER BY first_seq DESC LIMIT 1`, seq, seq))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s, err := a.read(ctx, row)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.last = s
	a.mu.Unlock()
	return s, nil
}

// segmentError is the error of a segment that does not match its row.
func segmentError(row segmentRow, format string, args ...any) *rowcall.Error {
	return &rowcall.Error{Code: rowcall.EInternal,
		Message:  fmt.Sprintf("receipt segment %s (seq %d to %d): ", row.Object, row.First, row.Last) + fmt.Sprintf(format, args...),
		HowToFix: "restore the segment object from a backup copy: the database's record of it (receipt_segments) is what it is checked against"}
}

// open fetches one segment, checks its bytes against its row's SHA-256 and
// returns its JSON lines.
func (a *Archive) open(ctx context.Context, row segmentRow) (*bufio.Reader, error) {
	data, err := a.Objects.Get(ctx, row.Object)
	if err != nil { // the cause names a path or a bucket's address: the log's, not the answer's
		slog.Error("sqlstore: a receipt segment cannot be read", "object", row.Object, "err", err)
		what := "cannot be read from object storage now"
		if errors.Is(err, ErrObjectNotFound) {
			what = "is missing from object storage"
		}
		e := segmentError(row, "%s", what)
		e.Code, e.HowToFix = rowcall.EReceiptUnavailable, "the host's log has the cause; restore the segment object from a backup copy, or fix access to the receipt archive"
		return nil, e
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != row.ObjectSHA256 {
		return nil, segmentError(row, "its sha256 %s is not the %s the database recorded when it was sealed — the segment was altered or replaced", hex.EncodeToString(sum[:]), row.ObjectSHA256)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, segmentError(row, "is not gzip: %v", err)
	}
	return bufio.NewReaderSize(zr, 64<<10), nil
}

// read fetches one segment whole and checks it against its row: bytes, seq
// run, Merkle root.
func (a *Archive) read(ctx context.Context, row segmentRow) (*openSegment, error) {
	fail := func(format string, args ...any) error { return segmentError(row, format, args...) }
	lines, err := a.open(ctx, row)
	if err != nil {
		return nil, err
	}
	s := &openSegment{row: row, receipts: make([]rowcall.Receipt, 0, row.Last-row.First+1)}
	dec := json.NewDecoder(lines)
	hashes := make([]string, 0, cap(s.receipts))
	for dec.More() {
		var r rowcall.Receipt
		if err := dec.Decode(&r); err != nil {
			return nil, fail("holds a line that is not a receipt: %v", err)
		}
		if want := row.First + int64(len(s.receipts)); r.Seq != want {
			return nil, fail("holds seq %d where seq %d belongs", r.Seq, want)
		}
		s.receipts = append(s.receipts, r)
		hashes = append(hashes, r.SHA256)
	}
	if int64(len(s.receipts)) != row.Last-row.First+1 {
		return nil, fail("holds %d receipts, not %d", len(s.receipts), row.Last-row.First+1)
	}
	if root := ledger.Root(hashes); root != row.Root {
		return nil, fail("its Merkle root %s is not the recorded %s", root, row.Root)
	}
	return s, nil
}

// archived returns up to limit archived receipts from seq after+1 on, across
// segments (none when after+1 is not sealed).
func (a *Archive) archived(ctx context.Context, after int64, limit int) ([]rowcall.Receipt, error) {
	var out []rowcall.Receipt
	for len(out) < limit {
		s, err := a.segment(ctx, after+1)
		if err != nil || s == nil {
			return out, err
		}
		from := s.receipts[after+1-s.row.First:]
		from = from[:min(len(from), limit-len(out))]
		out = append(out, from...)
		after = from[len(from)-1].Seq
	}
	return out, nil
}

// lookup finds an archived receipt by id through the segments' filters,
// newest segment first.
func (a *Archive) lookup(ctx context.Context, id string) (rowcall.Receipt, bool, error) {
	filters, err := a.filters(ctx)
	if err != nil {
		return rowcall.Receipt{}, false, err
	}
	// A filter may say yes for a receipt that is not there (1 in 100): a
	// segment that fails its check is reported only when no other segment
	// holds the receipt, so an altered segment never hides an intact one.
	var failed error
	for i := len(filters) - 1; i >= 0; i-- {
		if !filters[i].ids.TestString(id) {
			continue
		}
		r, found, err := a.find(ctx, filters[i].first, id)
		if err != nil {
			failed = cmp.Or(failed, err)
			continue
		}
		if found {
			return r, true, nil
		}
	}
	return rowcall.Receipt{}, false, failed
}

// find looks for id in the segment starting at first, line by line: only its
// own line is decoded (each line starts with the receipt's invocation_id).
func (a *Archive) find(ctx context.Context, first int64, id string) (rowcall.Receipt, bool, error) {
	var r rowcall.Receipt
	row, err := scanSegment(a.Store.DB.QueryRowContext(ctx, `SELECT `+segmentColumns+` FROM receipt_segments WHERE first_seq = ?`, first))
	if err != nil {
		return r, false, err
	}
	lines, err := a.open(ctx, row)
	if err != nil {
		return r, false, err
	}
	quoted, _ := json.Marshal(id)
	prefix := append(append([]byte(`{"invocation_id":`), quoted...), ',')
	for {
		line, err := lines.ReadBytes('\n')
		if bytes.HasPrefix(line, prefix) {
			if jerr := json.Unmarshal(line, &r); jerr != nil || r.Seq < row.First || r.Seq > row.Last {
				return r, false, segmentError(row, "holds a line for %s that is not one of its receipts", id)
			}
			return r, true, nil
		}
		if err == io.EOF {
			return r, false, nil
		}
		if err != nil {
			return r, false, segmentError(row, "cannot be read: %v", err)
		}
	}
}

// filters returns every segment's id filter, loading those sealed since the
// last call.
func (a *Archive) filters(ctx context.Context) ([]segmentIDs, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	after := int64(0)
	if n := len(a.blooms); n > 0 {
		after = a.blooms[n-1].first
	}
	rows, err := a.Store.DB.QueryContext(ctx, `SELECT first_seq, last_seq, ids FROM receipt_segments WHERE first_seq > ? ORDER BY first_seq`, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var f segmentIDs
		var b []byte
		if err := rows.Scan(&f.first, &f.last, &b); err != nil {
			return nil, err
		}
		f.ids = &bloom.BloomFilter{}
		if err := f.ids.UnmarshalBinary(b); err != nil {
			return nil, fmt.Errorf("receipt segment seq %d to %d: its id filter is damaged: %w", f.first, f.last, err)
		}
		a.blooms = append(a.blooms, f)
	}
	return a.blooms, rows.Err()
}

// Verify checks every sealed segment against the database's record and its
// signed checkpoint (keys), and that the segments and the table link into one
// chain with every receipt intact and signed: the operator's check of an
// archive, reading one segment at a time. It returns how many receipts it
// checked.
func (a *Archive) Verify(ctx context.Context, keys ledger.Keys) (int64, error) {
	rows, err := queryAll(ctx, a.Store, scanSegment, `SELECT `+segmentColumns+` FROM receipt_segments ORDER BY first_seq`)
	if err != nil {
		return 0, err
	}
	chain := keys.NewChain()
	for _, row := range rows {
		cp, seg, err := keys.OpenSegment([]byte(row.Checkpoint))
		if err != nil {
			return chain.Count(), fmt.Errorf("receipt segment %s: its checkpoint: %w", row.Object, err)
		}
		if seg.First != row.First || seg.Last != row.Last || seg.Root != row.Root || seg.Object != row.ObjectSHA256 || cp.Head != row.Head {
			return chain.Count(), fmt.Errorf("receipt segment %s: its record in the database is not what its signed checkpoint names (%s) — the record was altered", row.Object, seg.Line())
		}
		s, err := a.read(ctx, row)
		if err != nil {
			return chain.Count(), err
		}
		for i := range s.receipts {
			if err := chain.Add(&s.receipts[i]); err != nil {
				return chain.Count(), err
			}
		}
	}
	for after := chain.Last(); ; {
		rs, err := a.Store.receipts(ctx, `WHERE seq > ? ORDER BY seq LIMIT 1000`, after)
		if err != nil || len(rs) == 0 {
			return chain.Count(), err
		}
		for i := range rs {
			if err := chain.Add(&rs[i]); err != nil {
				return chain.Count(), err
			}
		}
		after = rs[len(rs)-1].Seq
	}
}
