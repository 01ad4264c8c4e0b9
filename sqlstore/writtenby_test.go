package sqlstore

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/rowcall/rowcall"
)

// Each version of a row names who wrote it, as every write path stores it
// and every read returns it; each event's snapshot names who made that
// event (an insert's or update's after, a delete's before), the deletion's
// too; a row written without the column (by hand, or before it existed)
// reads back "", and a DELETE made by hand records no deleter.
func TestWrittenBy(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	r := rowcall.NewRow("W", rowcall.TypeHTTP)
	r.Target, r.Content, r.WrittenBy = "GET http://127.0.0.1:1/", "# WHAT: w", "owner:terminal-key"
	out, err := s.Create(ctx, r)
	if err != nil || out.WrittenBy != "owner:terminal-key" {
		t.Fatalf("create: %+v %v", out, err)
	}
	r.Category, r.WrittenBy = "c", "person:per_a"
	if out, err = s.Replace(ctx, r, 1); err != nil || out.WrittenBy != "person:per_a" || out.Version != 2 {
		t.Fatalf("replace: %+v %v", out, err)
	}
	other := rowcall.NewRow("W2", rowcall.TypeFn)
	other.Content, other.WrittenBy = "# WHAT: w2", "owner:bearer"
	r.PlannerRank, r.WrittenBy = 7, "owner:bearer"
	if err := s.Upsert(ctx, []rowcall.Row{r, other}); err != nil {
		t.Fatal(err)
	}
	reads := map[string]func() (rowcall.Row, error){
		"Lookup": func() (rowcall.Row, error) { return s.Lookup(ctx, "W") },
		"Get":    func() (rowcall.Row, error) { return s.Get(ctx, "W") },
		"List": func() (rowcall.Row, error) {
			p, err := s.List(ctx, rowcall.Filter{Category: "c"})
			if err != nil || len(p.Rows) != 1 {
				t.Fatalf("list: %+v %v", p, err)
			}
			return p.Rows[0], nil
		},
		"RowsByKey": func() (rowcall.Row, error) {
			m, err := s.RowsByKey(ctx, []string{"W"})
			return m["W"], err
		},
	}
	for name, read := range reads {
		if got, err := read(); err != nil || got.WrittenBy != "owner:bearer" || got.Version != 3 {
			t.Fatalf("%s: %q at version %d (%v)", name, got.WrittenBy, got.Version, err)
		}
	}

	// A deletion at a version that moved on deletes nothing and records nothing.
	if err := s.Delete(ctx, "W", 2, "person:per_b"); rowcall.ErrorCode(err) != rowcall.EVersionConflict {
		t.Fatalf("stale delete: %v", err)
	}
	if err := s.Delete(ctx, "NONE", 0, "person:per_b"); rowcall.ErrorCode(err) != rowcall.ENotFound {
		t.Fatalf("delete of no row: %v", err)
	}
	if err := s.Delete(ctx, "W", 3, "person:per_b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, "W"); rowcall.ErrorCode(err) != rowcall.ENotFound {
		t.Fatalf("deleted row: %v", err)
	}
	want := []string{"insert owner:terminal-key", "update person:per_a", "update owner:bearer", "delete person:per_b"}
	if got := madeBy(t, s, "W"); !slices.Equal(got, want) {
		t.Fatalf("history of W names %q, want %q", got, want)
	}

	// Written and deleted by hand, in SQL: no writer, no deleter.
	if _, err := s.DB.Exec(`INSERT INTO directory (key, type, content, updated_at) VALUES ('HAND', 'fn', '# WHAT: h', '2026-01-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Lookup(ctx, "HAND"); err != nil || got.WrittenBy != "" {
		t.Fatalf("a row without written_by: %q (%v)", got.WrittenBy, err)
	}
	if _, err := s.DB.Exec(`DELETE FROM directory WHERE key = 'HAND'`); err != nil {
		t.Fatal(err)
	}
	if got := madeBy(t, s, "HAND"); !slices.Equal(got, []string{"insert ", "delete "}) {
		t.Fatalf("history of HAND names %q", got)
	}
	var left int
	if err := s.DB.QueryRow(`SELECT COUNT(*) FROM directory_deletions`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("directory_deletions keeps %d rows (%v)", left, err)
	}
}

// madeBy is each event of key's history as "action written_by", the
// written_by of the snapshot the event left (a delete's before).
func madeBy(t *testing.T, s *Store, key string) []string {
	t.Helper()
	events, err := s.History(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events {
		snap := e.After
		if e.Action == "delete" {
			snap = e.Before
		}
		var row map[string]any
		if err := json.Unmarshal(snap, &row); err != nil {
			t.Fatalf("%s: %s", e.Action, snap)
		}
		by, ok := row["written_by"].(string)
		if !ok {
			t.Fatalf("%s event without a written_by string: %s", e.Action, snap)
		}
		out = append(out, e.Action+" "+by)
	}
	return out
}
