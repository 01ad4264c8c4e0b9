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
// context reads the keys changed since the instance last looked, embeds the
// rows that exist now and upserts their vectors, and deletes the vectors of
// the keys that do not. The write is acknowledged first: the work runs after
// the response has gone to the shim, which holds the request's context open
// (ctx.waitUntil) until the operations Go started in it are done
// (build/shim/worker.mjs), bounded by syncLimit. Reading the event log
// rather than the request catches every change, whichever path made it (the
// API, an import, a row calling $SELF, another isolate), and an update that
// changes none of what is embedded or filtered on (a planner_rank, say)
// embeds nothing. Isolates sync independently and Vectorize has no
// conditional write, so what a key needs is decided from its row as it is
// now, not from the events, and after each upsert or delete the rows are
// read again and a key whose row changed meanwhile is written again: an
// isolate's late vector of a row's old text, or late delete of a row created
// again, never stays.
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

// held is what the index is known to hold for a key: no vector (none), or
// the vector of a row indexed as as.
type held struct {
	none bool
	as   indexed
}

// pass reads up to syncBatch events past the cursor, brings the vectors of
// the keys they touch to what the directory holds now, and moves the cursor
// past them. It returns how many it read.
//
// The events say which keys to look at, and of one thing more: a key whose
// every event here changed nothing embedded or filtered on (a planner_rank,
// say) has the vector it had before them, so a row still so indexed is left
// alone. Of any other key they say nothing the index can be trusted to
// reflect: another isolate may have synced some of them, deleting the vector
// of a row created again here, or storing the vector of a text edited back
// here, so the row is read as it is now and given its vector (due).
func (s *vectorSync) pass(ctx context.Context) (int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, key, before, after FROM events
		WHERE id > ? AND kind = 'DIRECTORY_MUTATE' ORDER BY id LIMIT ?`, s.cursor, syncBatch)
	if err != nil {
		return 0, err
	}
	var order []string
	seen := map[string]bool{}
	kept := map[string]held{} // keys whose events changed nothing indexed, as they were
	last, n := s.cursor, 0
	for rows.Next() {
		var id int64
		var key string
		var before, after sql.NullString
		if err := rows.Scan(&id, &key, &before, &after); err != nil {
			rows.Close()
			return 0, err
		}
		last, n = id, n+1
		_, same := kept[key]
		if !seen[key] {
			seen[key], same = true, true
			order = append(order, key)
		}
		if !same {
			continue
		}
		delete(kept, key)
		if !before.Valid || !after.Valid {
			continue // a create or a delete
		}
		var b, a rowcall.Row
		if err := json.Unmarshal([]byte(before.String), &b); err != nil {
			rows.Close()
			return 0, fmt.Errorf("event %d: %w", id, err)
		}
		if err := json.Unmarshal([]byte(after.String), &a); err != nil {
			rows.Close()
			return 0, fmt.Errorf("event %d: %w", id, err)
		}
		if indexedAs(&b) == indexedAs(&a) {
			kept[key] = held{as: indexedAs(&a)}
		}
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	todo, gone, err := s.due(ctx, order, kept)
	if err != nil {
		return 0, err
	}
	if err := s.apply(ctx, todo, gone); err != nil {
		return 0, err
	}
	s.cursor = last
	s.noted(func(r *syncReport) { r.Cursor = last })
	return n, nil
}

// due reads the rows of keys as they are now, on the primary, and returns
// those whose vector the index is not known (have) to hold as they are, and
// the keys of those that no longer exist and may still have a vector.
func (s *vectorSync) due(ctx context.Context, keys []string, have map[string]held) ([]*rowcall.Row, []string, error) {
	now, deleted, err := vectors.Current(onPrimary(ctx), sqlstore.New(s.db), keys)
	if err != nil {
		return nil, nil, err
	}
	var rows []*rowcall.Row
	for i := range now {
		if h, ok := have[now[i].Key]; !ok || h.none || h.as != indexedAs(&now[i]) {
			rows = append(rows, &now[i])
		}
	}
	var gone []string
	for _, k := range deleted {
		if h, ok := have[k]; !ok || !h.none {
			gone = append(gone, k)
		}
	}
	return rows, gone, nil
}

// apply upserts the vectors of rows as they are and deletes those of gone,
// then reads the keys again (due) and does the same for what changed
// meanwhile: a row edited, deleted, or created again by another isolate's
// write while this one's index writes were on their way.
//
// Vectorize has no conditional write: another isolate may have stored a
// row's newer vector before this upsert replaced it with an older text's,
// or the vector of a row created again before this delete removed it. The
// rows are read on the primary after the index accepted the writes, and
// Vectorize applies an index's mutations in the order it accepts them
// (describe's processedUpToMutation is a mark on one sequence; the
// documentation implies the order but does not state it), so a key's last
// writer either commits before this read, which then finds the row as it
// is and writes its vector again, or writes after it and its own sync's
// writes come later: whichever isolate writes last leaves the vector of the
// row as it is, or none for a row that does not exist.
func (s *vectorSync) apply(ctx context.Context, rows []*rowcall.Row, gone []string) error {
	m := s.emb.Model()
	for round := 0; len(rows) > 0 || len(gone) > 0; round++ {
		if round == maxRestores {
			var key string
			if len(rows) > 0 {
				key = rows[0].Key
			} else {
				key = gone[0]
			}
			return fmt.Errorf("vectorize: %s changed %d times while its vector was stored; the next write or a reindex stores it", key, round)
		}
		have := make(map[string]held, len(rows)+len(gone))
		keys := make([]string, 0, len(rows)+len(gone))
		if len(gone) > 0 {
			if err := s.idx.Delete(ctx, m, gone); err != nil {
				return err
			}
			s.noted(func(r *syncReport) { r.Deleted += int64(len(gone)) })
			for _, k := range gone {
				have[k] = held{none: true}
				keys = append(keys, k)
			}
		}
		if len(rows) > 0 {
			if err := s.upsert(ctx, rows); err != nil {
				return err
			}
			for _, r := range rows {
				have[r.Key] = held{as: indexedAs(r)}
				keys = append(keys, r.Key)
			}
		}
		var err error
		if rows, gone, err = s.due(ctx, keys, have); err != nil {
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

// maxRestores is how many rounds of index writes one pass makes for keys
// whose rows changed while their vectors were written (apply).
const maxRestores = 4

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
	now, _, err := vectors.Current(ctx, sqlstore.New(s.db), keys) // a row deleted since: the sync deletes its vector
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
	var rows []*rowcall.Row
	for i := range now {
		r := &now[i]
		if cur, ok := have[r.Key]; ok && !force && cur == rowcall.EmbedHash(m, rowcall.EmbedText(r)) {
			continue
		}
		rows = append(rows, r)
	}
	rep.Checked = len(now)
	if err := s.apply(ctx, rows, nil); err != nil {
		s.failed(err)
		return rep, err
	}
	rep.Embedded = len(rows)
	if len(keys) == limit {
		rep.Next = keys[len(keys)-1]
	}
	return rep, nil
}
