package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/rowcall/rowcall"
)

const receiptColumns = `id, trace, parent, actor, key, type, runner, started_at, duration_ms, ok, material, shape,
	cost_usd, upstream_status, outcome, input_sha256, output_sha256, contract_sha256`

// PutReceipt writes one receipt.
func (s *Store) PutReceipt(ctx context.Context, r *rowcall.Receipt) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO receipts (`+receiptColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.Trace, nullable(r.Parent), r.Actor, r.Key, string(r.Type), r.Runner, r.StartedAt, r.Millis,
		r.OK, r.Material, r.Shape, r.CostUSD, nullInt(r.Status), r.Outcome, r.Input, r.Output, r.Contract)
	return err
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

// Trace returns every receipt of one trace, oldest first.
func (s *Store) Trace(ctx context.Context, trace string) ([]rowcall.Receipt, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+receiptColumns+` FROM receipts WHERE trace = ? ORDER BY started_at, id`, trace)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []rowcall.Receipt
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
	var parent sql.NullString
	var status sql.NullInt64
	var typ string
	err := sc.Scan(&r.ID, &r.Trace, &parent, &r.Actor, &r.Key, &typ, &r.Runner, &r.StartedAt, &r.Millis, &r.OK,
		&r.Material, &r.Shape, &r.CostUSD, &status, &r.Outcome, &r.Input, &r.Output, &r.Contract)
	r.Parent, r.Status, r.Type = parent.String, int(status.Int64), rowcall.Type(typ)
	return r, err
}

func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}
