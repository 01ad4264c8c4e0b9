package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall"
)

const phraseColumns = `id, key, scope, phrase, source, approved, actor, COALESCE(receipt, ''), uses, COALESCE(model, ''), vector, created_at, used_at`

func scanPhrase(sc scanner) (rowcall.Phrase, error) {
	var p rowcall.Phrase
	var blob []byte
	err := sc.Scan(&p.ID, &p.Key, &p.Scope, &p.Text, &p.Source, &p.Approved, &p.Actor, &p.Receipt, &p.Uses, &p.Model, &blob, &p.CreatedAt, &p.UsedAt)
	if blob != nil {
		p.Vector = VectorValues(blob)
	}
	return p, err
}

// Learn stores p (taught again: its uses count up and its age starts over),
// then keeps the newest keep phrases of its row, scope and source that the
// owner did not approve, and deletes the phrases learned from use last taught
// before stale (the TTL; "" none).
func (s *Store) Learn(ctx context.Context, p rowcall.Phrase, keep int, stale string) error {
	if err := s.LearnSet(ctx, []rowcall.Phrase{p}); err != nil {
		return err
	}
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM learned WHERE key = ? AND scope = ? AND source = ? AND approved = 0 AND id NOT IN
		(SELECT id FROM learned WHERE key = ? AND scope = ? AND source = ? AND approved = 0 ORDER BY used_at DESC, id LIMIT ?)`,
		p.Key, p.Scope, p.Source, p.Key, p.Scope, p.Source, keep); err != nil {
		return err
	}
	if stale == "" {
		return nil
	}
	_, err := s.DB.ExecContext(ctx, `DELETE FROM learned WHERE approved = 0 AND source = 'use' AND used_at < ?`, stale)
	return err
}

// LearnSet stores ps, phrases of one key, scope, source, approval, actor and
// receipt (a model's questions for a row), in one statement: each taught
// again counts up its uses, starts its age over and takes ps' receipt (if
// any). No other phrase is deleted (ForgetPhrases does it once the set is
// stored).
func (s *Store) LearnSet(ctx context.Context, ps []rowcall.Phrase) error {
	if len(ps) == 0 {
		return nil
	}
	p, now := ps[0], s.now()
	args := []any{p.Key, p.Scope, p.Source, p.Approved, p.Actor, nullable(p.Receipt), now, now, now}
	if n := len(args) + 4*len(ps); n > s.maxParams() {
		return fmt.Errorf("%d phrases take %d bound parameters, more than the database's %d", len(ps), n, s.maxParams())
	}
	values := make([]string, len(ps))
	for i, p := range ps {
		var model, vector any
		if p.Vector != nil {
			model, vector = p.Model, VectorBlob(p.Vector)
		}
		values[i] = "(?,?,?,?)"
		args = append(args, phraseID(), p.Text, model, vector)
	}
	// WHERE 1: an upsert's SELECT needs a WHERE, or SQLite reads its ON as a join's.
	_, err := s.DB.ExecContext(ctx, `INSERT INTO learned (id, key, scope, phrase, source, approved, actor, receipt, model, vector, created_at, used_at, updated_at)
		SELECT column1, ?, ?, column2, ?, ?, ?, ?, column3, column4, ?, ?, ? FROM (VALUES `+strings.Join(values, ",")+`) WHERE 1
		ON CONFLICT (scope, key, phrase) DO UPDATE SET uses = uses + 1, used_at = excluded.used_at, updated_at = excluded.updated_at,
		receipt = COALESCE(excluded.receipt, receipt), approved = MAX(approved, excluded.approved)`, args...)
	return err
}

func phraseID() string {
	b := make([]byte, 9)
	rand.Read(b)
	return "lrn_" + hex.EncodeToString(b)
}

// Phrases lists learned phrases, newest first: of key when key is not "",
// and with their vectors only when vectors is set.
func (s *Store) Phrases(ctx context.Context, key string, vectors bool) ([]rowcall.Phrase, error) {
	cols := phraseColumns
	if !vectors {
		cols = `id, key, scope, phrase, source, approved, actor, COALESCE(receipt, ''), uses, COALESCE(model, ''), NULL, created_at, used_at`
	}
	q, args := `SELECT `+cols+` FROM learned`, []any{}
	if key != "" {
		q, args = q+` WHERE key = ?`, append(args, key)
	}
	return queryAll(ctx, s, scanPhrase, q+` ORDER BY used_at DESC, id`, args...)
}

// EditPhrase sets phrase id's text (and drops its vector, so it is embedded
// again) when text is not nil, and its approval when approved is not nil.
func (s *Store) EditPhrase(ctx context.Context, id string, text *string, approved *bool) error {
	var t, a any // NULL: unchanged
	if text != nil {
		t = *text
	}
	if approved != nil {
		a = *approved
	}
	res, err := s.DB.ExecContext(ctx, `UPDATE learned SET
		phrase = COALESCE(?, phrase), model = CASE WHEN ? IS NULL THEN model END, vector = CASE WHEN ? IS NULL THEN vector END,
		approved = COALESCE(?, approved), updated_at = ? WHERE id = ?`, t, t, t, a, s.now(), id)
	return oneRow(res, err, id)
}

// ForgetPhrases deletes key's phrases of source that the owner did not
// approve, except those receipt taught last (a row's questions from the
// model, once LearnSet stored the new ones), and only while all n phrases
// receipt taught still name it: a set that another call's ForgetPhrases
// deleted, or that a set stored after it took a phrase of (the same question,
// taught again), deletes nothing. So of calls that replace a row's questions
// at once, in whatever order their statements run, the last that deletes
// keeps its whole set, and the row is never left without one.
func (s *Store) ForgetPhrases(ctx context.Context, key, source, receipt string, n int) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM learned WHERE key = ? AND source = ? AND approved = 0 AND COALESCE(receipt, '') <> ?
		AND (SELECT count(*) FROM learned WHERE key = ? AND receipt = ?) = ?`, key, source, receipt, key, receipt, n)
	return err
}

// DeletePhrase deletes the learned phrase id.
func (s *Store) DeletePhrase(ctx context.Context, id string) error {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM learned WHERE id = ?`, id)
	return oneRow(res, err, id)
}

func oneRow(res sql.Result, err error, id string) error {
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &rowcall.Error{Code: rowcall.ENotFound, Message: "no learned phrase " + id, HowToFix: "GET /api/learned lists the learned phrases"}
	}
	return nil
}

// EmbedPhrases stores the vectors of phrases (their Model and Vector).
func (s *Store) EmbedPhrases(ctx context.Context, ps []rowcall.Phrase) error {
	for _, p := range ps {
		if _, err := s.DB.ExecContext(ctx, `UPDATE learned SET model = ?, vector = ? WHERE id = ? AND phrase = ?`,
			p.Model, VectorBlob(p.Vector), p.ID, p.Text); err != nil {
			return err
		}
	}
	return nil
}

// PhrasesStamp changes whenever a learned phrase is added, edited or
// deleted: an index of them reads them again when it moved.
func (s *Store) PhrasesStamp(ctx context.Context) (string, error) {
	var n int64
	var at string
	err := s.DB.QueryRowContext(ctx, `SELECT count(*), COALESCE(max(updated_at), '') FROM learned`).Scan(&n, &at)
	return at + "/" + strconv.FormatInt(n, 10), err
}
