package modules

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// BlobStore holds module bytes addressed by their SHA-256 digest (64 lowercase
// hex digits). Blobs are immutable: putting a digest that is already stored is a
// no-op. The registry verifies the digest of everything it reads back, so a
// store need not.
type BlobStore interface {
	// Put stores data under digest; storing an existing digest succeeds.
	Put(ctx context.Context, digest string, data []byte) error
	// Get returns the bytes, or an error wrapping ErrBlobNotFound.
	Get(ctx context.Context, digest string) ([]byte, error)
	// Has reports whether the complete blob is stored.
	Has(ctx context.Context, digest string) (bool, error)
	// Delete removes the blob; deleting an absent blob succeeds.
	Delete(ctx context.Context, digest string) error
}

// ErrBlobNotFound is what a BlobStore's Get wraps for an absent blob.
var ErrBlobNotFound = errors.New("blob not found")

// ChunkSize is the most bytes SQLBlobs puts in one row: D1 caps a value at
// 2,000,000 bytes, and half of that leaves room for the row's other columns.
const ChunkSize = 1_000_000

// SQLBlobs is a BlobStore in the module_blobs table (migrations/0005_modules.sql),
// one row per chunk of at most ChunkSize bytes, written one statement per chunk.
type SQLBlobs struct{ db *sql.DB }

// NewSQLBlobs returns a BlobStore in db's module_blobs table.
func NewSQLBlobs(db *sql.DB) *SQLBlobs { return &SQLBlobs{db: db} }

// Put writes the chunks that are missing. A crash part way leaves an
// incomplete blob that Has reports as absent and the next Put completes.
func (s *SQLBlobs) Put(ctx context.Context, digest string, data []byte) error {
	if !validDigest(digest) {
		return fmt.Errorf("modules: blob digest %q is not 64 lowercase hex digits", digest)
	}
	if ok, err := s.Has(ctx, digest); err != nil || ok {
		return err
	}
	chunks := (len(data) + ChunkSize - 1) / ChunkSize
	for i := 0; i < chunks; i++ {
		part := data[i*ChunkSize : min((i+1)*ChunkSize, len(data))]
		_, err := s.db.ExecContext(ctx, `INSERT INTO module_blobs (digest, chunk, chunks, size, data)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (digest, chunk) DO NOTHING`,
			digest, i, chunks, len(data), part)
		if err != nil {
			return fmt.Errorf("modules: write blob %s chunk %d of %d: %w", digest, i+1, chunks, err)
		}
	}
	return nil
}

// Get reads the chunks in order and checks that none is missing.
func (s *SQLBlobs) Get(ctx context.Context, digest string) ([]byte, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT chunk, chunks, size, data FROM module_blobs
		WHERE digest = ? ORDER BY chunk`, digest)
	if err != nil {
		return nil, fmt.Errorf("modules: read blob %s: %w", digest, err)
	}
	defer rows.Close()
	var out []byte
	var n, chunks, size int64
	for rows.Next() {
		var chunk int64
		var data []byte
		if err := rows.Scan(&chunk, &chunks, &size, &data); err != nil {
			return nil, fmt.Errorf("modules: read blob %s: %w", digest, err)
		}
		if chunk != n {
			break // a gap: incomplete
		}
		if out == nil {
			out = make([]byte, 0, size)
		}
		out = append(out, data...)
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("modules: read blob %s: %w", digest, err)
	}
	if n == 0 || n != chunks || int64(len(out)) != size {
		return nil, fmt.Errorf("modules: blob %s: %w (%d of %d chunks stored)", digest, ErrBlobNotFound, n, chunks)
	}
	return out, nil
}

// Has reports whether every chunk of the blob is stored.
func (s *SQLBlobs) Has(ctx context.Context, digest string) (bool, error) {
	var n, chunks sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), MAX(chunks) FROM module_blobs WHERE digest = ?`, digest).Scan(&n, &chunks)
	if err != nil {
		return false, fmt.Errorf("modules: look up blob %s: %w", digest, err)
	}
	return n.Int64 > 0 && n.Int64 == chunks.Int64, nil
}

// Delete removes every chunk in one statement.
func (s *SQLBlobs) Delete(ctx context.Context, digest string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM module_blobs WHERE digest = ?`, digest); err != nil {
		return fmt.Errorf("modules: delete blob %s: %w", digest, err)
	}
	return nil
}
