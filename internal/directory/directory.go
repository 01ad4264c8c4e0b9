// Package directory is the directory's write path, over any store of rows
// (rowcall.Directory; sqlstore.Store is the one hosts use): the rules every
// write of a row passes, PATCH's merge against the current version, and a
// notice to subscribers after every change that calls read (the dispatcher's
// row cache subscribes). Reads pass through to the store.
//
//	dir := directory.New(store, secretsPrefix)
//	dir.Subscribe(dispatcher.Touch)
//	dir.Create(ctx, row)                      // hygiene gate, auth check, then the store
//	dir.Patch(ctx, key, 0, func(r *rowcall.Row) error { r.PlannerRank = 7; return nil })
//
// The rules: a whole row (Create, Replace, Import) must pass the hygiene gate
// (rowcall.Row.Hygiene) and the auth check (rowcall.CheckAuth); a patch may
// not add a violation the row did not already have, so older rows stay
// editable, and may not change auth to a column the check refuses.
//
// Every row written and every deletion names its writer, the context's
// rowcall.Writer (the API puts the caller's actor there): the row's own
// WrittenBy, a body's or a stored version's, is never what is recorded.
package directory

import (
	"context"
	"slices"
	"sync"

	"github.com/rowcall/rowcall"
)

// Service is the directory's write path. It implements
// rowcall.DirectoryService.
type Service struct {
	rowcall.DirectoryReader
	store  rowcall.DirectoryWriter
	prefix string // ROWCALL_SECRETS_PREFIX: the namespace of variables rows may name

	mu   sync.RWMutex
	subs []func()
}

// New returns the write path over store. secretsPrefix, when set, is the only
// namespace of variables a row's auth may name (besides the owner key).
func New(store rowcall.Directory, secretsPrefix string) *Service {
	return &Service{DirectoryReader: store, store: store, prefix: secretsPrefix}
}

// maxMerges bounds how often a patch without a version re-reads and merges
// again when other writes keep winning the race for the row.
const maxMerges = 32

// Subscribe has f called after every change that calls read: a row written
// or deleted (here), a module or a breaker changed (Changed).
func (s *Service) Subscribe(f func()) {
	s.mu.Lock()
	s.subs = append(s.subs, f)
	s.mu.Unlock()
}

// Changed tells the subscribers that something calls read changed.
func (s *Service) Changed() {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, f := range s.subs {
		f()
	}
}

// Check is the rule every whole row written passes: the hygiene gate, then
// the auth check.
func (s *Service) Check(r *rowcall.Row) error {
	if v := r.Hygiene(); len(v) > 0 {
		return Hygiene(v[0])
	}
	if e := rowcall.CheckAuth(r.Auth, s.prefix); e != nil {
		return e
	}
	return nil
}

// Create inserts a new row that passes Check.
func (s *Service) Create(ctx context.Context, r rowcall.Row) (rowcall.Row, error) {
	if err := s.Check(&r); err != nil {
		return r, err
	}
	defer s.Changed()
	r.WrittenBy = rowcall.Writer(ctx)
	return s.store.Create(ctx, r)
}

// Replace writes a whole row that passes Check over the row at ifVersion (any
// version when 0).
func (s *Service) Replace(ctx context.Context, r rowcall.Row, ifVersion int64) (rowcall.Row, error) {
	if err := s.Check(&r); err != nil {
		return r, err
	}
	defer s.Changed()
	r.WrittenBy = rowcall.Writer(ctx)
	return s.store.Replace(ctx, r, ifVersion)
}

// Patch applies change to the current row and writes it. With ifVersion, the
// row must still be at that version (EVersionConflict otherwise); without
// one, a concurrent edit makes Patch read the row again and apply change to
// the new version, so no update is lost. change may refuse the merged row
// with an error (which Patch returns).
func (s *Service) Patch(ctx context.Context, key string, ifVersion int64, change func(*rowcall.Row) error) (rowcall.Row, error) {
	defer s.Changed()
	for attempt := 0; ; attempt++ {
		cur, err := s.Lookup(ctx, key)
		if err != nil {
			return cur, err
		}
		if ifVersion != 0 && cur.Version != ifVersion {
			return cur, rowcall.VersionConflict(cur, ifVersion)
		}
		next := cur
		if err := change(&next); err != nil {
			return cur, err
		}
		if v := newViolation(cur.Hygiene(), next.Hygiene()); v != "" {
			return cur, Hygiene(v)
		}
		if next.Auth != cur.Auth {
			if e := rowcall.CheckAuth(next.Auth, s.prefix); e != nil {
				return cur, e
			}
		}
		next.WrittenBy = rowcall.Writer(ctx)
		out, err := s.store.Replace(ctx, next, cur.Version)
		if rowcall.ErrorCode(err) == rowcall.EVersionConflict && ifVersion == 0 && attempt < maxMerges {
			continue
		}
		return out, err
	}
}

// Delete removes a row, at ifVersion unless 0; its delete event names the
// context's writer.
func (s *Service) Delete(ctx context.Context, key string, ifVersion int64) error {
	defer s.Changed()
	return s.store.Delete(ctx, key, ifVersion, rowcall.Writer(ctx))
}

// Import writes rows that each passed Check (the caller reports which did
// not, row by row), in batches under D1's limits.
func (s *Service) Import(ctx context.Context, rows []rowcall.Row) error {
	rows = slices.Clone(rows) // the caller's rows keep what they said
	by := rowcall.Writer(ctx)
	for i := range rows {
		if err := s.Check(&rows[i]); err != nil {
			return err
		}
		rows[i].WrittenBy = by
	}
	defer s.Changed()
	return s.store.Upsert(ctx, rows)
}

// Hygiene is the hygiene gate's refusal of violation v.
func Hygiene(v rowcall.Violation) error {
	return &rowcall.Error{Code: rowcall.EHygiene, Args: []string{string(v)}, Message: v.Message(), HowToFix: v.HowToFix()}
}

// newViolation returns the first violation in after that is not in before.
func newViolation(before, after []rowcall.Violation) rowcall.Violation {
	for _, a := range after {
		old := false
		for _, b := range before {
			old = old || a == b
		}
		if !old {
			return a
		}
	}
	return ""
}
