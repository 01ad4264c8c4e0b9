package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/sqlstore"
)

// vectorSync keeps the Vectorize index current with the directory, from the
// event log: after a directory write (a request to /api/directory… or
// /api/import that is not a read) has been answered, the request's own
// context embeds the rows changed since the instance last looked and upserts
// their vectors, and deletes the vectors of rows deleted. The write is
// acknowledged first: the work runs after the response has gone to the shim,
// which holds the request's context open (ctx.waitUntil) until the
// operations Go started in it are done (build/shim/worker.mjs), bounded by
// syncLimit. Reading the event log rather than the request catches every
// change, whichever path made it (the API, an import, a row calling $SELF,
// another isolate), and an update that changes none of what is embedded or
// filtered on (a planner_rank, say) embeds nothing. Isolates sync
// independently and Vectorize has no conditional write, so after each
// upsert the rows are read again and a row whose text changed meanwhile is
// upserted again: an isolate's late vector of a row's old text never stays.
//
// The cursor starts at the event log's end when the instance sees its first
// write, and moves past what was done; a failed batch stays behind it and is
// tried again after the next write. What happened before the first write an
// instance saw (rows imported before vectors were configured, or while the
// index was failing) is the reindex's to embed.
type vectorSync struct {
	db  *sql.DB
	emb rowcall.Embedder
	idx rowcall.VectorIndex

	mu     sync.Mutex  // one pass at a time; it guards cursor
	cursor int64       // events up to here are done; -1 until the first write
	placed atomic.Bool // cursor is placed: a write need not wait for mu

	rmu    sync.Mutex // guards report, which stats read during a pass
	report syncReport
}

type syncReport struct {
	Cursor    int64  `json:"cursor"`
	Embedded  int64  `json:"embedded"`
	Deleted   int64  `json:"deleted"`
	Failures  int64  `json:"failures"`
	LastError string `json:"last_error,omitempty"`
}

// syncLimit bounds one pass after a write; syncBatch is how many events it
// reads at a time, and syncMaxEvents how many it takes on in one pass (an
// import of more waits for the next write, or the reindex).
const (
	syncLimit     = 25 * time.Second
	syncBatch     = 500
	syncMaxEvents = 2000
)

func newVectorSync(db *sql.DB, emb rowcall.Embedder, idx rowcall.VectorIndex) *vectorSync {
	return &vectorSync{db: db, emb: emb, idx: idx, cursor: -1}
}

// isDirectoryWrite reports whether r may change rows.
func isDirectoryWrite(r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		return false
	}
	return r.URL.Path == "/api/import" || r.URL.Path == "/api/directory" || strings.HasPrefix(r.URL.Path, "/api/directory/")
}

// before runs ahead of a write: on the instance's first, it places the
// cursor at the event log's end.
func (s *vectorSync) before(ctx context.Context) {
	if s.placed.Load() {
		return // a pass may hold mu for a while: a write never waits for it
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cursor >= 0 {
		return
	}
	var id int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id); err != nil {
		s.failed(err)
		return
	}
	s.cursor = id
	s.placed.Store(true)
	s.noted(func(r *syncReport) { r.Cursor = id })
}

// after runs once the write is answered: it brings the index up to the
// event log's end (at most syncMaxEvents events).
func (s *vectorSync) after(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, syncLimit)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	for done := 0; s.cursor >= 0 && done < syncMaxEvents; {
		n, err := s.pass(ctx)
		if err != nil {
			s.failed(err)
			return
		}
		if n < syncBatch {
			return
		}
		done += n
	}
}

func (s *vectorSync) failed(err error) {
	s.noted(func(r *syncReport) { r.Failures++; r.LastError = err.Error() })
	slog.Error("rowcall: vectors", "err", err)
}

func (s *vectorSync) noted(f func(*syncReport)) {
	s.rmu.Lock()
	f(&s.report)
	s.rmu.Unlock()
}

// snapshot returns what the sync has done (GET /_worker/stats).
func (s *vectorSync) snapshot() syncReport {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.report
}

// changedRow is a key's net change over a run of events.
type changedRow struct {
	deleted bool
	first   *rowcall.Row // before the first event (nil: it did not exist)
	last    rowcall.Row  // after the last
}

// pass reads up to syncBatch events past the cursor, applies them and moves
// the cursor past them. It returns how many it read.
func (s *vectorSync) pass(ctx context.Context) (int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, action, key, before, after FROM events
		WHERE id > ? AND kind = 'DIRECTORY_MUTATE' ORDER BY id LIMIT ?`, s.cursor, syncBatch)
	if err != nil {
		return 0, err
	}
	changes := map[string]*changedRow{}
	var order []string
	last, n := s.cursor, 0
	for rows.Next() {
		var id int64
		var action, key string
		var before, after sql.NullString
		if err := rows.Scan(&id, &action, &key, &before, &after); err != nil {
			rows.Close()
			return 0, err
		}
		last, n = id, n+1
		c, ok := changes[key]
		if !ok {
			c = &changedRow{}
			if before.Valid {
				c.first = &rowcall.Row{}
				if err := json.Unmarshal([]byte(before.String), c.first); err != nil {
					rows.Close()
					return 0, fmt.Errorf("event %d: %w", id, err)
				}
			}
			changes[key] = c
			order = append(order, key)
		}
		c.deleted = action == "delete"
		if !c.deleted {
			c.last = rowcall.Row{}
			if err := json.Unmarshal([]byte(after.String), &c.last); err != nil {
				rows.Close()
				return 0, fmt.Errorf("event %d: %w", id, err)
			}
		}
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if err := s.apply(ctx, order, changes); err != nil {
		return 0, err
	}
	s.cursor = last
	s.noted(func(r *syncReport) { r.Cursor = last })
	return n, nil
}

// apply embeds and upserts the rows changed in what is embedded or
// filtered on, and deletes the deleted ones; a row that changed again while
// its vector was on its way (another isolate's write) is upserted again as
// it is now (changedSince).
func (s *vectorSync) apply(ctx context.Context, order []string, changes map[string]*changedRow) error {
	m := s.emb.Model()
	var gone []string
	var rows []*rowcall.Row
	for _, key := range order {
		c := changes[key]
		switch {
		case c.deleted:
			gone = append(gone, key)
		case c.first != nil && indexedAs(c.first) == indexedAs(&c.last):
			// nothing embedded or filtered on changed
		default:
			rows = append(rows, &c.last)
		}
	}
	if len(gone) > 0 {
		if err := s.idx.Delete(ctx, m, gone); err != nil {
			return err
		}
		s.noted(func(r *syncReport) { r.Deleted += int64(len(gone)) })
	}
	for round := 0; len(rows) > 0; round++ {
		if round == maxRestores {
			return fmt.Errorf("vectorize: %s changed %d times while its vector was stored; the next write or a reindex stores it", rows[0].Key, round)
		}
		if err := s.upsert(ctx, rows); err != nil {
			return err
		}
		var err error
		if rows, err = s.changedSince(ctx, rows); err != nil {
			return err
		}
	}
	return nil
}

// upsert embeds rows as they are and upserts their vectors.
func (s *vectorSync) upsert(ctx context.Context, rows []*rowcall.Row) error {
	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = rowcall.EmbedText(r)
	}
	m, values, err := vectors.Embed(ctx, s.emb, texts)
	if err != nil {
		return err
	}
	vs := make([]rowcall.Vector, len(rows))
	for i, r := range rows {
		vs[i] = rowcall.Vector{Key: r.Key, TextHash: rowcall.EmbedHash(m, texts[i]), Version: r.Version, Values: values[i],
			Category: r.Category, Enabled: r.Enabled != 0, Visible: r.PlannerVisible != 0}
	}
	if err := s.idx.Upsert(ctx, m, vs); err != nil {
		return err
	}
	s.noted(func(r *syncReport) { r.Embedded += int64(len(vs)) })
	return nil
}

// maxRestores is how many times one pass upserts a row's vector again
// because the row changed meanwhile (changedSince).
const maxRestores = 4

// changedSince returns, among rows whose vectors were just upserted, those
// whose stored row no longer is what its vector holds (indexedAs), as they
// are now, and deletes the vectors of those deleted. Vectorize has no
// conditional write: another isolate may have stored a row's newer vector
// before this upsert replaced it with an older text's. The rows are read on
// the primary after the upsert was accepted, and Vectorize applies an
// index's mutations in the order it accepts them (describe's
// processedUpToMutation is a mark on one sequence; the documentation implies
// the order but does not state it), so the row's last writer either commits
// before this read, which then finds its text and upserts it again, or
// upserts after it: the vector Vectorize keeps is the row's current one.
func (s *vectorSync) changedSince(ctx context.Context, rows []*rowcall.Row) ([]*rowcall.Row, error) {
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	now, err := sqlstore.New(s.db).RowsByKey(onPrimary(ctx), keys)
	if err != nil {
		return nil, err
	}
	var changed []*rowcall.Row
	var gone []string
	for _, r := range rows {
		switch c, ok := now[r.Key]; {
		case !ok:
			gone = append(gone, r.Key)
		case indexedAs(&c) != indexedAs(r):
			changed = append(changed, &c)
		}
	}
	if len(gone) > 0 {
		if err := s.idx.Delete(ctx, s.emb.Model(), gone); err != nil {
			return nil, err
		}
	}
	return changed, nil
}

// indexed is what of a row its vector holds: the text embedded and what
// queries filter on.
type indexed struct {
	text, category   string
	enabled, visible bool
}

func indexedAs(r *rowcall.Row) indexed {
	return indexed{rowcall.EmbedText(r), r.Category, r.Enabled != 0, r.PlannerVisible != 0}
}

// reindexPage is how many rows one reindex call looks at, at most.
const reindexPage = 500

// reindexReport is what POST /_worker/reindex answers.
type reindexReport struct {
	Checked  int    `json:"checked"`        // rows looked at
	Embedded int    `json:"embedded"`       // of them, embedded and upserted (no current vector)
	Next     string `json:"next,omitempty"` // the after= of the next page; none at the end
}

// reindex embeds, among the rows keyed after after (up to limit, in key
// order), those whose vector is missing or embeds other text (every one with
// force, which also rewrites their metadata): rows written
// before the instance's first write, or whose sync failed past the next
// write. The index's hashes say which (vectors.Hasher); a vector is never
// upserted twice for the same text. The sync's cursor is placed first, so
// what is written from now on is the sync's; and one pass at a time, so a
// reindex never upserts a row's older text over a newer one.
func (s *vectorSync) reindex(ctx context.Context, after string, limit int, force bool) (reindexReport, error) {
	var rep reindexReport
	if limit <= 0 || limit > reindexPage {
		limit = reindexPage
	}
	s.before(ctx)
	ctx, cancel := context.WithTimeout(ctx, syncLimit)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.db.QueryContext(ctx, `SELECT key FROM directory WHERE key > ? ORDER BY key LIMIT ?`, after, limit)
	if err != nil {
		return rep, err
	}
	var keys []string
	for q.Next() {
		var k string
		if err := q.Scan(&k); err != nil {
			q.Close()
			return rep, err
		}
		keys = append(keys, k)
	}
	if err := q.Close(); err != nil {
		return rep, err
	}
	if len(keys) == 0 {
		return rep, nil
	}
	byKey, err := sqlstore.New(s.db).RowsByKey(ctx, keys)
	if err != nil {
		return rep, err
	}
	m := s.emb.Model()
	have := map[string][32]byte{}
	if h, ok := s.idx.(vectors.Hasher); ok {
		if have, err = h.Hashes(ctx, m, keys); err != nil {
			return rep, err
		}
	}
	changes := map[string]*changedRow{}
	var order []string
	for _, k := range keys {
		r, ok := byKey[k]
		if !ok {
			continue // deleted since: the sync deletes its vector
		}
		rep.Checked++
		if cur, ok := have[k]; ok && !force && cur == rowcall.EmbedHash(m, rowcall.EmbedText(&r)) {
			continue
		}
		changes[k] = &changedRow{last: r}
		order = append(order, k)
	}
	if err := s.apply(ctx, order, changes); err != nil {
		s.failed(err)
		return rep, err
	}
	rep.Embedded = len(order)
	if len(keys) == limit {
		rep.Next = keys[len(keys)-1]
	}
	return rep, nil
}
