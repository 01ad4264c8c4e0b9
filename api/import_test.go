package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/directory"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore"
)

// racingStore is a real store where another writer edits row A just after
// an import has read the stored rows, before it writes.
type racingStore struct {
	*sqlstore.Store
	race bool
}

func (s *racingStore) RowsByKey(ctx context.Context, keys []string) (map[string]rowcall.Row, error) {
	stored, err := s.Store.RowsByKey(ctx, keys)
	if a, ok := stored["A"]; ok && s.race {
		a.Category = "edited meanwhile"
		if _, err := s.Store.Replace(ctx, a, a.Version); err != nil {
			return nil, err
		}
	}
	return stored, err
}

// POST /api/import?if_match=1 (what `rowcall import openapi` sends, and POST
// /api/import/openapi does) writes each row guarded by the version it
// compared: an edit that lands between the compare and the write is refused
// with version_conflict and kept. A plain import overwrites it.
func TestImportIfMatch(t *testing.T) {
	for _, guarded := range []bool{true, false} {
		store := &racingStore{Store: testenv.Store(t)}
		ctx := context.Background()
		for _, key := range []string{"A", "B"} {
			r := rowcall.NewRow(key, rowcall.TypeHTTP)
			r.Target, r.Content = "GET https://example.com/"+key, "# WHAT: row "+key
			if _, err := store.Create(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		h := api.New(api.Config{OwnerKeys: func() []string { return []string{ownerKey} }}, directory.New(store, ""), store, &dispatch.Dispatcher{Store: store})
		rows, _ := json.Marshal(map[string]any{"rows": []map[string]any{
			{"key": "A", "type": "http", "target": "GET https://example.com/A2", "content": "# WHAT: row A"},
			{"key": "B", "type": "http", "target": "GET https://example.com/B", "content": "# WHAT: row B"},
		}})
		store.race = true
		path := "/api/import"
		if guarded {
			path += "?if_match=1"
		}
		w := send(t, h, "POST", path, string(rows))
		store.race = false
		a, _ := store.Lookup(ctx, "A")
		if guarded {
			if w.Code != 412 || !strings.Contains(w.Body.String(), `"error":"version_conflict"`) || a.Category != "edited meanwhile" || a.Target != "GET https://example.com/A" {
				t.Fatalf("guarded: HTTP %d %s; A is %q %q", w.Code, w.Body, a.Target, a.Category)
			}
		} else if w.Code != 200 || a.Category != "" || a.Target != "GET https://example.com/A2" {
			t.Fatalf("plain: HTTP %d %s; A is %q %q", w.Code, w.Body, a.Target, a.Category)
		}
	}
}

// ownerWritesMeanwhile is a real store where the owner creates row K by hand
// just after an import has read the stored rows (K was free then).
type ownerWritesMeanwhile struct{ *sqlstore.Store }

func (s ownerWritesMeanwhile) RowsByKey(ctx context.Context, keys []string) (map[string]rowcall.Row, error) {
	stored, err := s.Store.RowsByKey(ctx, keys)
	r := rowcall.NewRow("K", rowcall.TypeHTTP)
	r.Target, r.Content, r.Approval = "GET https://internal.example/k", "# WHAT: the owner's own row", 1
	if _, err := s.Store.Create(ctx, r); err != nil {
		return nil, err
	}
	return stored, err
}

// TestImportSourceRacingOwner: an import with a source (and no if_match)
// never replaces a row the owner made, even one made between the import's
// read and its write: the provenance checked is the provenance replaced.
func TestImportSourceRacingOwner(t *testing.T) {
	store := ownerWritesMeanwhile{testenv.Store(t)}
	h := api.New(api.Config{OwnerKeys: func() []string { return []string{ownerKey} }}, directory.New(store, ""), store, &dispatch.Dispatcher{Store: store})
	rows, _ := json.Marshal(map[string]any{"rows": []map[string]any{
		{"key": "K", "type": "http", "target": "GET https://api.example.com/k", "content": "# WHAT: an imported operation"},
	}})
	w := send(t, h, "POST", "/api/import?source=openapi:https://api.example.com", string(rows))
	k, _ := store.Lookup(context.Background(), "K")
	if k.ImportedFrom != "" || k.Target != "GET https://internal.example/k" || k.Approval != 1 {
		t.Errorf("the owner's row K was replaced by the import: target %q, approval %d, imported_from %q", k.Target, k.Approval, k.ImportedFrom)
	}
	if w.Code != 409 || !strings.Contains(w.Body.String(), `"error":"key_exists"`) {
		t.Errorf("HTTP %d %s; want 409 key_exists", w.Code, w.Body)
	}
}
