package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/rowcall/rowcall"
)

const approvalColumns = `id, key, contract_sha256, input_sha256, caller, actor, why, shape, status, created_at, expires_at,
	decided_at, decided_by, reason, used_by, person_id`

// CreateApproval stores a new pending approval in one statement, unless
// the same call (key, contract, input, caller) already waits unexpired at
// a.CreatedAt, or its caller already has limit approvals waiting: id is then
// the waiting one's (created false), or "" when the cap refused it. One
// statement decides both, so hosts sharing the database cannot pass the cap
// or store one call twice.
func (s *Store) CreateApproval(ctx context.Context, a rowcall.Approval, limit int) (id string, created bool, err error) {
	var shape any
	if a.Shape != nil {
		b, err := json.Marshal(a.Shape)
		if err != nil {
			return "", false, err
		}
		shape = string(b)
	}
	for range 3 { // again only when what refused it was decided meanwhile
		err = s.DB.QueryRowContext(ctx, `INSERT INTO approvals (`+approvalColumns+`)
			SELECT ?,?,?,?,?,?,?,?,?,?,?,NULL,NULL,NULL,NULL,?
			WHERE NOT EXISTS (SELECT 1 FROM approvals WHERE `+waiting+` AND key = ? AND contract_sha256 = ? AND input_sha256 = ?)
			AND (SELECT COUNT(*) FROM approvals WHERE `+waiting+`) < ?
			RETURNING id`,
			a.ID, a.Key, a.Contract, a.Input, a.Caller, a.Actor, a.Why, shape, a.Status, a.CreatedAt, a.ExpiresAt, a.Person,
			a.CreatedAt, a.Caller, a.Key, a.Contract, a.Input, a.CreatedAt, a.Caller, limit).Scan(&id)
		if !errors.Is(err, sql.ErrNoRows) {
			return id, err == nil, err
		}
		var same sql.NullString
		var n int
		err = s.DB.QueryRowContext(ctx, `SELECT (SELECT id FROM approvals WHERE `+waiting+` AND key = ? AND contract_sha256 = ? AND input_sha256 = ?
			ORDER BY created_at, id LIMIT 1), (SELECT COUNT(*) FROM approvals WHERE `+waiting+`)`,
			a.CreatedAt, a.Caller, a.Key, a.Contract, a.Input, a.CreatedAt, a.Caller).Scan(&same, &n)
		switch {
		case err != nil:
			return "", false, err
		case same.Valid:
			return same.String, false, nil
		case n >= limit:
			return "", false, nil
		}
	}
	return "", false, errors.New("the approval was neither stored nor refused after three tries")
}

// waiting is the condition of a caller's approvals waiting for a decision at
// a time (the parameters: the time, the caller).
const waiting = `status = 'pending' AND expires_at > ? AND caller = ?`

// Approval returns one approval; a missing one is ENotFound.
func (s *Store) Approval(ctx context.Context, id string) (rowcall.Approval, error) {
	a, err := scanApproval(s.DB.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, &rowcall.Error{Code: rowcall.ENotFound, Message: "no approval " + id}
	}
	return a, err
}

// PendingApprovals lists the approvals waiting for a decision, oldest first.
func (s *Store) PendingApprovals(ctx context.Context) ([]rowcall.Approval, error) {
	return queryAll(ctx, s, scanApproval, `SELECT `+approvalColumns+` FROM approvals WHERE status = 'pending' ORDER BY created_at, id`)
}

// DecideApproval moves a pending approval that has not expired at now to
// status (approved or denied), recording who, why and, for an approval, until
// when it may be used. ok is false when it was not pending (or had expired):
// nothing changed.
func (s *Store) DecideApproval(ctx context.Context, id, status, by, reason, now, expiresAt string) (a rowcall.Approval, ok bool, err error) {
	a, err = scanApproval(s.DB.QueryRowContext(ctx, `UPDATE approvals SET status = ?, decided_at = ?, decided_by = ?, reason = ?,
		expires_at = CASE WHEN ? = 'approved' THEN ? ELSE expires_at END
		WHERE id = ? AND status = 'pending' AND expires_at > ? RETURNING `+approvalColumns,
		status, now, by, nullable(reason), status, expiresAt, id, now))
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	return a, err == nil, err
}

// UseApproval marks an approved approval used by the invocation inv, in one
// statement, only if it is still approved and unexpired at now and binds
// exactly this call (key, contract, input, caller): ok is false otherwise,
// and nothing changed.
func (s *Store) UseApproval(ctx context.Context, id, inv, now string, call rowcall.Approval) (a rowcall.Approval, ok bool, err error) {
	a, err = scanApproval(s.DB.QueryRowContext(ctx, `UPDATE approvals SET status = 'used', used_by = ?
		WHERE id = ? AND status = 'approved' AND expires_at > ? AND key = ? AND contract_sha256 = ? AND input_sha256 = ? AND caller = ?
		RETURNING `+approvalColumns, inv, id, now, call.Key, call.Contract, call.Input, call.Caller))
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	return a, err == nil, err
}

// MatchApproval finds an approved, unexpired, unused approval of exactly this
// call ("" when there is none): what a call that names no approval runs on.
func (s *Store) MatchApproval(ctx context.Context, now string, call rowcall.Approval) (string, error) {
	var id string
	err := s.DB.QueryRowContext(ctx, `SELECT id FROM approvals WHERE status = 'approved' AND expires_at > ? AND key = ?
		AND contract_sha256 = ? AND input_sha256 = ? AND caller = ? ORDER BY decided_at LIMIT 1`,
		now, call.Key, call.Contract, call.Input, call.Caller).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// ExpireApprovals marks every pending or approved approval whose time ran out
// by now expired, and returns them (each once: the UPDATE moves them).
func (s *Store) ExpireApprovals(ctx context.Context, now string) ([]rowcall.Approval, error) {
	return queryAll(ctx, s, scanApproval, `UPDATE approvals SET status = 'expired'
		WHERE status IN ('pending', 'approved') AND expires_at <= ? RETURNING `+approvalColumns, now)
}

func scanApproval(sc scanner) (rowcall.Approval, error) {
	var a rowcall.Approval
	var shape, decidedAt, decidedBy, reason, usedBy sql.NullString
	err := sc.Scan(&a.ID, &a.Key, &a.Contract, &a.Input, &a.Caller, &a.Actor, &a.Why, &shape, &a.Status, &a.CreatedAt,
		&a.ExpiresAt, &decidedAt, &decidedBy, &reason, &usedBy, &a.Person)
	if err != nil {
		return a, err
	}
	a.DecidedAt, a.DecidedBy, a.Reason, a.UsedBy = decidedAt.String, decidedBy.String, reason.String, usedBy.String
	if shape.Valid {
		var v any
		if json.Unmarshal([]byte(shape.String), &v) == nil {
			a.Shape = v
		}
	}
	return a, nil
}
