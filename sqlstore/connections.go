package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/rowcall/rowcall"
)

// PutConnection stores c, replacing holder's connection to the provider (its
// created_at is kept).
func (s *Store) PutConnection(ctx context.Context, c rowcall.SealedConnection) error {
	now := s.now()
	_, err := s.DB.ExecContext(ctx, `INSERT INTO connections (holder, provider, key_id, sealed, expires_at, created_at, updated_at)
		VALUES (?,?,?,?,?,?,?) ON CONFLICT (holder, provider) DO UPDATE SET
		key_id = excluded.key_id, sealed = excluded.sealed, expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
		c.Holder, c.Provider, c.KeyID, c.Sealed, nullable(c.ExpiresAt), now, now)
	return err
}

// ReplaceConnection stores c only while holder's connection is still old, in
// one conditional statement.
func (s *Store) ReplaceConnection(ctx context.Context, old, c rowcall.SealedConnection) (bool, error) {
	res, err := s.DB.ExecContext(ctx, `UPDATE connections SET key_id = ?, sealed = ?, expires_at = ?, updated_at = ?
		WHERE holder = ? AND provider = ? AND key_id = ? AND sealed = ?`,
		c.KeyID, c.Sealed, nullable(c.ExpiresAt), s.now(), c.Holder, c.Provider, old.KeyID, old.Sealed)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// GetConnection returns holder's connection to provider.
func (s *Store) GetConnection(ctx context.Context, holder, provider string) (rowcall.SealedConnection, error) {
	c := rowcall.SealedConnection{Connection: rowcall.Connection{Holder: holder, Provider: provider}}
	var exp sql.NullString
	err := s.DB.QueryRowContext(ctx, `SELECT key_id, sealed, expires_at, created_at, updated_at FROM connections WHERE holder = ? AND provider = ?`,
		holder, provider).Scan(&c.KeyID, &c.Sealed, &exp, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, &rowcall.Error{Code: rowcall.ENotFound, Message: "no connection to " + provider + " for " + holder,
			HowToFix: "connect first: call a row that uses the connection, or POST /api/connections/" + provider + ", and open the link it gives"}
	}
	c.ExpiresAt = exp.String
	return c, err
}

// ListConnections lists holder's connections ("": everyone's), by holder then provider.
func (s *Store) ListConnections(ctx context.Context, holder string) ([]rowcall.Connection, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT holder, provider, expires_at, created_at, updated_at FROM connections
		WHERE ? = '' OR holder = ? ORDER BY holder, provider`, holder, holder)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []rowcall.Connection{}
	for rows.Next() {
		var c rowcall.Connection
		var exp sql.NullString
		if err := rows.Scan(&c.Holder, &c.Provider, &exp, &c.CreatedAt, &c.UpdatedAt); err != nil {
			return nil, err
		}
		c.ExpiresAt = exp.String
		out = append(out, c)
	}
	return out, rows.Err()
}

// DeleteConnection forgets holder's connection to provider.
func (s *Store) DeleteConnection(ctx context.Context, holder, provider string) (bool, error) {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM connections WHERE holder = ? AND provider = ?`, holder, provider)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// PutProvider stores p, replacing the provider of that name if any.
func (s *Store) PutProvider(ctx context.Context, p rowcall.SealedProvider) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO connection_providers (name, server, key_id, sealed, created_at)
		VALUES (?,?,?,?,?) ON CONFLICT (name) DO UPDATE SET
		server = excluded.server, key_id = excluded.key_id, sealed = excluded.sealed, created_at = excluded.created_at`,
		p.Name, p.Server, p.KeyID, p.Sealed, s.now())
	return err
}

// GetProvider returns the registered provider name (ENotFound when none).
func (s *Store) GetProvider(ctx context.Context, name string) (rowcall.SealedProvider, error) {
	p := rowcall.SealedProvider{Name: name}
	err := s.DB.QueryRowContext(ctx, `SELECT server, key_id, sealed, created_at FROM connection_providers WHERE name = ?`, name).
		Scan(&p.Server, &p.KeyID, &p.Sealed, &p.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return p, &rowcall.Error{Code: rowcall.ENotFound, Message: "no provider " + name + " on this host",
			HowToFix: "import the MCP server again: an import registers the host with a server that needs a sign-in"}
	}
	return p, err
}
