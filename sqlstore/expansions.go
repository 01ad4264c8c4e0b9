package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
)

// expansionsKept is how many texts' questions a row keeps (Remember): its
// newest, enough for a text that flips between a few versions.
const expansionsKept = 8

// Expansion returns the questions a model wrote for the text whose
// fingerprint is fp, and the receipt of that call (ok false: none kept).
func (s *Store) Expansion(ctx context.Context, fp string) (questions []string, receipt string, ok bool, err error) {
	var qs string
	err = s.DB.QueryRowContext(ctx, `SELECT questions, receipt FROM expansions WHERE fingerprint = ?`, fp).Scan(&qs, &receipt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	if err := json.Unmarshal([]byte(qs), &questions); err != nil {
		return nil, "", false, err
	}
	return questions, receipt, true, nil
}

// RememberExpansion keeps the questions call receipt wrote for key's text
// of fingerprint fp, and forgets the oldest of key's beyond expansionsKept.
func (s *Store) RememberExpansion(ctx context.Context, fp, key, receipt string, questions []string) error {
	qs, err := json.Marshal(questions)
	if err != nil {
		return err
	}
	if _, err := s.DB.ExecContext(ctx, `INSERT INTO expansions (fingerprint, key, questions, receipt, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (fingerprint) DO UPDATE SET questions = excluded.questions, receipt = excluded.receipt, created_at = excluded.created_at`,
		fp, key, string(qs), receipt, s.now()); err != nil {
		return err
	}
	_, err = s.DB.ExecContext(ctx, `DELETE FROM expansions WHERE key = ? AND fingerprint NOT IN
		(SELECT fingerprint FROM expansions WHERE key = ? ORDER BY created_at DESC, fingerprint LIMIT ?)`, key, key, expansionsKept)
	return err
}
