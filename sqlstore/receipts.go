package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/rowcall/rowcall"
)

const receiptColumns = `id, trace, parent, actor, key, type, runner, started_at, duration_ms, ok, material, shape,
	cost_usd, upstream_status, outcome, input_sha256, output_sha256, contract_sha256, token_id,
	seq, prev_sha256, sha256, sig, key_id`

// Signer links a receipt after (prevSeq, prevHash) and signs it
// (ledger.Signer does).
type Signer interface {
	Sign(r *rowcall.Receipt, prevSeq int64, prevHash string)
}

// AppendReceipt adds r to the end of the receipt chain: it takes the next seq,
// links to the previous receipt's hash, is signed, and is written. Appends are
// serialized in this process; another process appending at the same moment
// loses the unique seq and this one retries on the new end.
func (s *Store) AppendReceipt(ctx context.Context, r *rowcall.Receipt, signer Signer) error {
	s.chainMu.Lock()
	defer s.chainMu.Unlock()
	for attempt := 0; ; attempt++ {
		if !s.chainKnown {
			var seq sql.NullInt64
			var hash sql.NullString
			err := s.DB.QueryRowContext(ctx, `SELECT seq, sha256 FROM receipts WHERE seq = (SELECT MAX(seq) FROM receipts)`).Scan(&seq, &hash)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			s.chainSeq, s.chainHash, s.chainKnown = seq.Int64, hash.String, true
		}
		signer.Sign(r, s.chainSeq, s.chainHash)
		_, err := s.DB.ExecContext(ctx, `INSERT INTO receipts (`+receiptColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			r.ID, r.Trace, nullable(r.Parent), r.Actor, r.Key, string(r.Type), r.Runner, r.StartedAt, r.Millis,
			r.OK, r.Material, r.Shape, r.CostUSD, nullInt(r.Status), r.Outcome, r.Input, r.Output, r.Contract, nullable(r.TokenID),
			r.Seq, r.Prev, r.SHA256, r.Sig, r.KeyID)
		if err == nil {
			s.chainSeq, s.chainHash = r.Seq, r.SHA256
			return nil
		}
		s.chainKnown = false
		if attempt >= 20 || !strings.Contains(err.Error(), "UNIQUE") {
			return err
		}
	}
}

// Receipts returns up to limit receipts with seq > after, in chain order: the
// export that `rowcall receipt verify` checks offline.
func (s *Store) Receipts(ctx context.Context, after int64, limit int) ([]rowcall.Receipt, error) {
	return s.receipts(ctx, `WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
}

// Receipt returns the receipt with id.
func (s *Store) Receipt(ctx context.Context, id string) (rowcall.Receipt, error) {
	r, err := scanReceipt(s.DB.QueryRowContext(ctx, `SELECT `+receiptColumns+` FROM receipts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, &rowcall.Error{Code: rowcall.ENotFound, Message: "no receipt " + id,
			HowToFix: "check the invocation id (inv_…) from the dispatch answer's proof"}
	}
	return r, err
}

// Trace returns every receipt of one trace, in chain order.
func (s *Store) Trace(ctx context.Context, trace string) ([]rowcall.Receipt, error) {
	return s.receipts(ctx, `WHERE trace = ? ORDER BY seq`, trace)
}

func (s *Store) receipts(ctx context.Context, cond string, args ...any) ([]rowcall.Receipt, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+receiptColumns+` FROM receipts `+cond, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []rowcall.Receipt{}
	for rows.Next() {
		r, err := scanReceipt(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanReceipt(sc scanner) (rowcall.Receipt, error) {
	var r rowcall.Receipt
	var parent, token, prev, hash, sig, keyID sql.NullString
	var status, seq sql.NullInt64
	var typ string
	err := sc.Scan(&r.ID, &r.Trace, &parent, &r.Actor, &r.Key, &typ, &r.Runner, &r.StartedAt, &r.Millis, &r.OK,
		&r.Material, &r.Shape, &r.CostUSD, &status, &r.Outcome, &r.Input, &r.Output, &r.Contract, &token,
		&seq, &prev, &hash, &sig, &keyID)
	r.Parent, r.Status, r.Type, r.TokenID = parent.String, int(status.Int64), rowcall.Type(typ), token.String
	r.Seq, r.Prev, r.SHA256, r.Sig, r.KeyID = seq.Int64, prev.String, hash.String, sig.String, keyID.String
	return r, err
}

func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}
