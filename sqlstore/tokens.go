package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rowcall/rowcall"
)

const tokenColumns = `id, name, scope_keys, scope_categories, audience, risk_ceiling, pins, fixed_body, max_payload,
	expires_at, created_at, revoked_at, limits, client_id, approval, approve, teach, person_id`

// CreateToken stores a token with the SHA-256 of its secret (never the secret).
func (s *Store) CreateToken(ctx context.Context, t *rowcall.Token, secretSHA256 string) error {
	t.CreatedAt = s.now()
	keys, _ := json.Marshal(orNone(t.Keys))
	cats, _ := json.Marshal(orNone(t.Categories))
	var pins any
	if len(t.Pins) > 0 {
		b, _ := json.Marshal(t.Pins)
		pins = string(b)
	}
	var fixed any
	if t.FixedBody != nil {
		fixed = *t.FixedBody
	}
	var limits any
	if t.Limits.Any() {
		b, _ := json.Marshal(t.Limits)
		limits = string(b)
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO tokens (secret_sha256, `+tokenColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,NULL,?,?,?,?,?,?)`,
		secretSHA256, t.ID, nullable(t.Name), string(keys), string(cats), t.Audience, t.RiskCeiling, pins, fixed,
		nullInt(int(t.MaxPayload)), nullable(t.ExpiresAt), t.CreatedAt, limits, nullable(t.Client), nullable(t.Approval), t.Approve, t.Teach, t.Person)
	return err
}

// TokenBySecret finds the token whose secret hashes to secretSHA256, or
// whose previous secret does while it is kept (an OAuth refresh's grace:
// SetTokenSecret). The second query is asked only when the first finds none.
func (s *Store) TokenBySecret(ctx context.Context, secretSHA256 string) (rowcall.Token, error) {
	t, err := s.token(ctx, `secret_sha256 = ?`, secretSHA256)
	if e := (*rowcall.Error)(nil); errors.As(err, &e) && e.Code == rowcall.ENotFound {
		if prev, perr := s.token(ctx, `prev_secret_sha256 = ? AND prev_until > ?`, secretSHA256, s.now()); perr == nil {
			return prev, nil
		}
	}
	return t, err
}

// Token returns the token with id.
func (s *Store) Token(ctx context.Context, id string) (rowcall.Token, error) {
	return s.token(ctx, `id = ?`, id)
}

func (s *Store) token(ctx context.Context, cond string, args ...any) (rowcall.Token, error) {
	t, err := scanToken(s.DB.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE `+cond, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return t, &rowcall.Error{Code: rowcall.ENotFound, Message: "no such token", HowToFix: "GET /api/tokens lists the tokens"}
	}
	return t, err
}

// Tokens lists every token, newest first, without secrets.
func (s *Store) Tokens(ctx context.Context) ([]rowcall.Token, error) {
	return queryAll(ctx, s, scanToken, `SELECT `+tokenColumns+` FROM tokens ORDER BY created_at DESC, id`)
}

// RevokeToken marks a token revoked; revoking twice keeps the first time.
func (s *Store) RevokeToken(ctx context.Context, id string) (rowcall.Token, error) {
	if _, err := s.DB.ExecContext(ctx, `UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, s.now(), id); err != nil {
		return rowcall.Token{}, err
	}
	return s.Token(ctx, id)
}

func scanToken(sc scanner) (rowcall.Token, error) {
	var t rowcall.Token
	var name, pins, fixed, expires, revoked, limits, client, approval sql.NullString
	var keys, cats string
	var max sql.NullInt64
	err := sc.Scan(&t.ID, &name, &keys, &cats, &t.Audience, &t.RiskCeiling, &pins, &fixed, &max, &expires, &t.CreatedAt, &revoked, &limits, &client, &approval, &t.Approve, &t.Teach, &t.Person)
	if err != nil {
		return t, err
	}
	t.Name, t.ExpiresAt, t.RevokedAt, t.MaxPayload, t.Client = name.String, expires.String, revoked.String, max.Int64, client.String
	t.Approval = approval.String
	json.Unmarshal([]byte(keys), &t.Keys)
	json.Unmarshal([]byte(cats), &t.Categories)
	if pins.Valid {
		json.Unmarshal([]byte(pins.String), &t.Pins)
	}
	if fixed.Valid {
		t.FixedBody = &fixed.String
	}
	if limits.Valid {
		if err := json.Unmarshal([]byte(limits.String), &t.Limits); err != nil { // fail closed: not a token without limits
			return t, fmt.Errorf("token %s: stored limits are not JSON: %w", t.ID, err)
		}
	}
	return t, nil
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
