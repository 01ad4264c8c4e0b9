package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/rowcall/rowcall"
)

const receiptColumns = `id, trace, parent, actor, key, type, runner, started_at, duration_ms, ok, material, shape,
	cost_usd, upstream_status, outcome, input_sha256, output_sha256, contract_sha256, token_id,
	seq, prev_sha256, sha256, sig, key_id, batch, approval, approver, person_iss, person_sub`

// Signer links receipts in order after (prevSeq, prevHash) and signs them as
// one batch (ledger.Signer does).
type Signer interface {
	SignChain(rs []*rowcall.Receipt, prevSeq int64, prevHash string)
}

// Receipts returns up to limit receipts with seq > after, in chain order: the
// export that `rowcall receipt verify` checks offline.
// With an Archive, receipts pruned from the table are read from its segments.
func (s *Store) Receipts(ctx context.Context, after int64, limit int) ([]rowcall.Receipt, error) {
	out := []rowcall.Receipt{}
	err := s.EachReceipt(ctx, after, limit, func(r *rowcall.Receipt) error {
		out = append(out, *r)
		return nil
	})
	return out, err
}

// EachReceipt calls fn with each receipt Receipts returns, in chain order, as
// it is read (in queries of ReadPage receipts when that is set); fn's
// *Receipt is valid only during the call. An error from fn stops the read and
// is returned.
func (s *Store) EachReceipt(ctx context.Context, after int64, limit int, fn func(*rowcall.Receipt) error) error {
	if s.Archive != nil && limit > 0 {
		// Receipts pruned from the table come from the sealed segments first.
		var first sql.NullInt64
		if err := s.DB.QueryRowContext(ctx, `SELECT MIN(seq) FROM receipts WHERE seq > ?`, after).Scan(&first); err != nil {
			return err
		}
		if !first.Valid || first.Int64 != after+1 {
			old, err := s.Archive.archived(ctx, after, limit)
			if err != nil {
				return err
			}
			for i := range old {
				if err := fn(&old[i]); err != nil {
					return err
				}
				after = old[i].Seq
			}
			limit -= len(old)
		}
	}
	for limit > 0 {
		n := limit
		if s.ReadPage > 0 {
			n = min(n, s.ReadPage)
		}
		got := 0
		rows, err := s.DB.QueryContext(ctx, `SELECT `+receiptColumns+` FROM receipts WHERE seq > ? ORDER BY seq LIMIT ?`, after, n)
		if err != nil {
			return err
		}
		for rows.Next() {
			r, err := scanReceipt(rows)
			if err == nil {
				err = fn(&r)
			}
			if err != nil {
				rows.Close()
				return err
			}
			got, after = got+1, r.Seq
		}
		err = rows.Err()
		rows.Close()
		if err != nil || got < n {
			return err
		}
		limit -= got
	}
	return nil
}

// Receipt returns the receipt with id (from the Archive's segments too, when
// the store has one).
func (s *Store) Receipt(ctx context.Context, id string) (rowcall.Receipt, error) {
	r, err := scanReceipt(s.DB.QueryRowContext(ctx, `SELECT `+receiptColumns+` FROM receipts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) && s.Archive != nil {
		var found bool
		if r, found, err = s.Archive.lookup(ctx, id); err == nil && !found {
			err = sql.ErrNoRows
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return r, &rowcall.Error{Code: rowcall.ENotFound, Message: "no receipt " + id,
			HowToFix: "check the invocation id (inv_…) from the dispatch answer's proof"}
	}
	return r, err
}

// ChainHead returns the newest receipt's seq and sha256 (0, "" when there is
// none): one indexed row, what a checkpoint signs.
func (s *Store) ChainHead(ctx context.Context) (seq int64, sha256 string, err error) {
	return chainHead(ctx, s.DB)
}

// rowQuerier is a *sql.DB or a *sql.Conn (the receipt writer's own).
type rowQuerier interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

func chainHead(ctx context.Context, q rowQuerier) (int64, string, error) {
	var seq sql.NullInt64
	var hash string
	err := q.QueryRowContext(ctx, `SELECT seq, sha256 FROM receipts WHERE seq = (SELECT MAX(seq) FROM receipts)`).Scan(&seq, hexCol{&hash})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, "", err
	}
	return seq.Int64, hash, nil
}

// Trace returns every receipt of one trace, in chain order.
func (s *Store) Trace(ctx context.Context, trace string) ([]rowcall.Receipt, error) {
	return s.receipts(ctx, `WHERE trace = ? ORDER BY seq`, trace)
}

func (s *Store) receipts(ctx context.Context, cond string, args ...any) ([]rowcall.Receipt, error) {
	return queryAll(ctx, s, scanReceipt, `SELECT `+receiptColumns+` FROM receipts `+cond, args...)
}

func scanReceipt(sc scanner) (rowcall.Receipt, error) {
	var r rowcall.Receipt
	var parent, token, keyID, approval, approver, personIss, personSub sql.NullString
	var status, seq sql.NullInt64
	var typ string
	err := sc.Scan(&r.ID, &r.Trace, &parent, &r.Actor, &r.Key, &typ, &r.Runner, &r.StartedAt, &r.Millis, &r.OK,
		&r.Material, &r.Shape, &r.CostUSD, &status, &r.Outcome, hexCol{&r.Input}, hexCol{&r.Output}, hexCol{&r.Contract}, &token,
		&seq, hexCol{&r.Prev}, hexCol{&r.SHA256}, sigCol{&r.Sig}, &keyID, batchCol{&r.Batch}, &approval, &approver, &personIss, &personSub)
	r.Parent, r.Status, r.Type, r.TokenID = parent.String, int(status.Int64), rowcall.Type(typ), token.String
	r.Approval, r.Approver = approval.String, approver.String
	r.PersonIssuer, r.PersonSubject = personIss.String, personSub.String
	r.Seq, r.KeyID = max(seq.Int64, 0), keyID.String // a receipt from before the chain has seq < 0 (migration 0016)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		err = fmt.Errorf("receipt %s: %w", r.ID, err)
	}
	return r, err
}

func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}
