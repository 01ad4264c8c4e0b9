package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
)

// unusedClientLife is how long a registered client that no consent used is kept.
const unusedClientLife = 24 * time.Hour

func (s *Store) clock() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Store) ago(d time.Duration) string { return s.clock().Add(-d).Format(rowcall.Timestamp) }

// RegisterClient stores c in one statement, which also counts the bounds, so
// hosts sharing a database (sqld, D1) cannot pass them together.
func (s *Store) RegisterClient(ctx context.Context, c *rowcall.OAuthClient, b rowcall.OAuthBounds) (bool, error) {
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM oauth_clients WHERE used_at IS NULL AND created_at < ?`, s.ago(unusedClientLife)); err != nil {
		return false, err
	}
	c.CreatedAt = s.now()
	uris, _ := json.Marshal(c.RedirectURIs)
	minute := s.ago(time.Minute)
	return s.stored(s.DB.ExecContext(ctx, `INSERT INTO oauth_clients (client_id, name, logo_uri, redirect_uris, created_at, remote)
		SELECT ?,?,?,?,?,? WHERE (SELECT COUNT(*) FROM oauth_clients WHERE created_at > ?) < ?
		AND (SELECT COUNT(*) FROM oauth_clients WHERE created_at > ? AND remote = ?) < ?
		AND (SELECT COUNT(*) FROM oauth_clients WHERE used_at IS NULL) < ?
		AND (SELECT COUNT(*) FROM oauth_clients WHERE used_at IS NULL AND remote = ?) < ?`,
		c.ID, nullable(c.Name), nullable(c.LogoURI), string(uris), c.CreatedAt, c.Remote,
		minute, b.RegisterPerMinute, minute, c.Remote, b.RegisterPerMinutePerAddress,
		b.MaxUnused, c.Remote, b.MaxUnusedPerAddress))
}

// stored reports whether an INSERT … SELECT … WHERE <bounds> stored its row.
func (s *Store) stored(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// OAuthClient returns the registered client id.
func (s *Store) OAuthClient(ctx context.Context, id string) (rowcall.OAuthClient, error) {
	c := rowcall.OAuthClient{ID: id}
	var name, logo sql.NullString
	var uris string
	err := s.DB.QueryRowContext(ctx, `SELECT name, logo_uri, redirect_uris, created_at FROM oauth_clients WHERE client_id = ?`, id).
		Scan(&name, &logo, &uris, &c.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, &rowcall.Error{Code: rowcall.ENotFound, Message: "no registered client " + id,
			HowToFix: "register the client again (POST /oauth/register): a client no consent used is forgotten after a day"}
	}
	c.Name, c.LogoURI = name.String, logo.String
	json.Unmarshal([]byte(uris), &c.RedirectURIs)
	return c, err
}

// CreateOAuthRequest stores a request waiting for consent unless that would
// pass b's bounds (in all, for its client, from its address), counted in the
// INSERT itself so that hosts sharing a database cannot pass them together.
// It first forgets requests answered or expired, and codes an hour past
// their expiry, revoking the tokens of codes never redeemed. It reports
// whether the request was stored.
func (s *Store) CreateOAuthRequest(ctx context.Context, q *rowcall.OAuthRequest, b rowcall.OAuthBounds) (bool, error) {
	old, now := s.ago(time.Hour), s.now()
	for _, stmt := range []string{
		`UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id IN (SELECT token_id FROM oauth_codes WHERE used_at IS NULL AND expires_at < ?)`,
		`DELETE FROM oauth_codes WHERE expires_at < ?`,
		`DELETE FROM oauth_requests WHERE expires_at <= ? OR done_at IS NOT NULL`,
	} {
		args := []any{old}
		switch {
		case strings.HasPrefix(stmt, "UPDATE"):
			args = []any{now, old}
		case strings.Contains(stmt, "oauth_requests"):
			args = []any{now}
		}
		if _, err := s.DB.ExecContext(ctx, stmt, args...); err != nil {
			return false, err
		}
	}
	const waiting = `SELECT COUNT(*) FROM oauth_requests WHERE done_at IS NULL AND expires_at > ?`
	return s.stored(s.DB.ExecContext(ctx, `INSERT INTO oauth_requests (id, client_id, client_name, logo_uri, redirect_uri, code_challenge, state, resource, scope, expires_at, remote)
		SELECT ?,?,?,?,?,?,?,?,?,?,? WHERE (`+waiting+`) < ? AND (`+waiting+` AND client_id = ?) < ? AND (`+waiting+` AND remote = ?) < ?`,
		q.ID, q.ClientID, nullable(q.ClientName), nullable(q.LogoURI), q.RedirectURI, q.CodeChallenge,
		nullable(q.State), q.Resource, nullable(q.Scope), q.ExpiresAt, q.Remote,
		now, b.MaxPending, now, q.ClientID, b.PendingPerClient, now, q.Remote, b.PendingPerAddress))
}

// OAuthRequest returns a request that is not answered and not expired.
func (s *Store) OAuthRequest(ctx context.Context, id string) (rowcall.OAuthRequest, error) {
	q := rowcall.OAuthRequest{ID: id}
	var name, logo, state, scope sql.NullString
	err := s.DB.QueryRowContext(ctx, `SELECT client_id, client_name, logo_uri, redirect_uri, code_challenge, state, resource, scope, expires_at
		FROM oauth_requests WHERE id = ? AND done_at IS NULL AND expires_at > ?`, id, s.now()).
		Scan(&q.ClientID, &name, &logo, &q.RedirectURI, &q.CodeChallenge, &state, &q.Resource, &scope, &q.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return q, &rowcall.Error{Code: rowcall.ENotFound, Message: "no authorization request " + id + " waiting for consent (answered, expired or never made)",
			HowToFix: "start the sign-in again from the client"}
	}
	q.ClientName, q.LogoURI, q.State, q.Scope = name.String, logo.String, state.String, scope.String
	return q, err
}

// FinishOAuthRequest marks the request answered, and its client used.
func (s *Store) FinishOAuthRequest(ctx context.Context, id string) (bool, error) {
	var client string
	err := s.DB.QueryRowContext(ctx, `UPDATE oauth_requests SET done_at = ? WHERE id = ? AND done_at IS NULL RETURNING client_id`, s.now(), id).Scan(&client)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = s.DB.ExecContext(ctx, `UPDATE oauth_clients SET used_at = COALESCE(used_at, ?) WHERE client_id = ?`, s.now(), client)
	return err == nil, err
}

// CreateOAuthCode stores a code by its hash.
func (s *Store) CreateOAuthCode(ctx context.Context, codeSHA256 string, c rowcall.OAuthCode) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO oauth_codes (code_sha256, token_id, client_id, redirect_uri, code_challenge, resource, expires_at)
		VALUES (?,?,?,?,?,?,?)`, codeSHA256, c.TokenID, c.ClientID, c.RedirectURI, c.CodeChallenge, c.Resource, c.ExpiresAt)
	return err
}

const codeColumns = `token_id, client_id, redirect_uri, code_challenge, resource, expires_at`

// UseOAuthCode marks a code used in one statement (two token requests with
// one code cannot both be first).
func (s *Store) UseOAuthCode(ctx context.Context, codeSHA256 string) (rowcall.OAuthCode, bool, error) {
	var c rowcall.OAuthCode
	scan := func(row *sql.Row) error {
		return row.Scan(&c.TokenID, &c.ClientID, &c.RedirectURI, &c.CodeChallenge, &c.Resource, &c.ExpiresAt)
	}
	err := scan(s.DB.QueryRowContext(ctx, `UPDATE oauth_codes SET used_at = ? WHERE code_sha256 = ? AND used_at IS NULL RETURNING `+codeColumns, s.now(), codeSHA256))
	if !errors.Is(err, sql.ErrNoRows) {
		return c, err == nil, err
	}
	err = scan(s.DB.QueryRowContext(ctx, `SELECT `+codeColumns+` FROM oauth_codes WHERE code_sha256 = ?`, codeSHA256))
	return c, false, err
}

// CreateRefresh stores a refresh token by its hash.
func (s *Store) CreateRefresh(ctx context.Context, refreshSHA256 string, r rowcall.OAuthRefresh) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO oauth_refresh (refresh_sha256, token_id, client_id, gen, created_at) VALUES (?,?,?,?,?)`,
		refreshSHA256, r.TokenID, r.ClientID, r.Gen, s.now())
	return err
}

// UseRefresh marks a refresh token used, or takes it again within grace, in
// one statement, so that hosts sharing a database (sqld, D1) cannot both
// take a replay for the grace: the check that no later generation of the
// grant was used is in the UPDATE itself.
func (s *Store) UseRefresh(ctx context.Context, refreshSHA256, clientID string, grace time.Duration) (rowcall.OAuthRefresh, bool, error) {
	var r rowcall.OAuthRefresh
	err := s.DB.QueryRowContext(ctx, `UPDATE oauth_refresh SET used_at = COALESCE(used_at, ?) WHERE refresh_sha256 = ?
		AND (used_at IS NULL OR (used_at > ? AND client_id = ? AND NOT EXISTS (SELECT 1 FROM oauth_refresh later
			WHERE later.token_id = oauth_refresh.token_id AND later.gen > oauth_refresh.gen AND later.used_at IS NOT NULL)))
		RETURNING token_id, client_id, gen`,
		s.now(), refreshSHA256, s.ago(grace), clientID).Scan(&r.TokenID, &r.ClientID, &r.Gen)
	if !errors.Is(err, sql.ErrNoRows) {
		return r, err == nil, err
	}
	r.TokenID, r.ClientID, err = s.RefreshToken(ctx, refreshSHA256)
	return r, false, err
}

// RefreshToken returns the token and client of a refresh token.
func (s *Store) RefreshToken(ctx context.Context, refreshSHA256 string) (tokenID, clientID string, err error) {
	err = s.DB.QueryRowContext(ctx, `SELECT token_id, client_id FROM oauth_refresh WHERE refresh_sha256 = ?`, refreshSHA256).Scan(&tokenID, &clientID)
	return tokenID, clientID, err
}

// SetTokenSecret replaces the secret of a token that is not revoked; the
// secret it replaces stays good for keepOld (TokenBySecret).
func (s *Store) SetTokenSecret(ctx context.Context, id, secretSHA256 string, keepOld time.Duration) error {
	var until any // NULL: the old secret is not kept
	if keepOld > 0 {
		until = s.clock().Add(keepOld).Format(rowcall.Timestamp)
	}
	res, err := s.DB.ExecContext(ctx, `UPDATE tokens SET prev_secret_sha256 = CASE WHEN ? IS NULL THEN NULL ELSE secret_sha256 END, prev_until = ?,
		secret_sha256 = ? WHERE id = ? AND revoked_at IS NULL`, until, until, secretSHA256, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return &rowcall.Error{Code: rowcall.ENotFound, Message: "token " + id + " is revoked or gone", HowToFix: "sign in again"}
	}
	return nil
}
