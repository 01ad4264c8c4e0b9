package api_test

// In-process tests of the API against a fake store, for what the black-box
// suite (test/) cannot reach cheaply: a write that loses the race for a row
// again and again, and a store that fails.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/directory"
	"github.com/rowcall/rowcall/internal/dispatch"
)

const ownerKey = "rk_test_owner"

// fakeStore keeps one row in memory. It embeds the interface, so a method
// the test does not expect panics (nil) instead of answering quietly.
type fakeStore struct {
	rowcall.Directory
	mu       sync.Mutex
	row      rowcall.Row
	races    int   // how many Replace calls still lose to a "concurrent" edit
	replaces int   // Replace calls made
	fail     error // what every Lookup returns, when set
}

func (f *fakeStore) Lookup(ctx context.Context, key string) (rowcall.Row, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return rowcall.Row{}, f.fail
	}
	if key != f.row.Key {
		return rowcall.Row{}, &rowcall.Error{Code: rowcall.ENotFound}
	}
	return f.row, nil
}

func (f *fakeStore) Get(ctx context.Context, key string) (rowcall.Row, error) {
	return f.Lookup(ctx, key)
}

func (f *fakeStore) Replace(ctx context.Context, r rowcall.Row, ifVersion int64) (rowcall.Row, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replaces++
	if f.races > 0 { // another writer got there first: the row moved on
		f.races--
		f.row.Version++
		f.row.Category += "+other"
		return f.row, rowcall.VersionConflict(f.row, ifVersion)
	}
	if ifVersion != 0 && ifVersion != f.row.Version {
		return f.row, rowcall.VersionConflict(f.row, ifVersion)
	}
	r.Version = f.row.Version + 1
	f.row = r
	return r, nil
}

// tokens has none: the tests send the owner key.
type tokens struct{ api.Store }

func (tokens) TokenBySecret(context.Context, string) (rowcall.Token, error) {
	return rowcall.Token{}, &rowcall.Error{Code: rowcall.ENotFound}
}

func newAPI(t *testing.T, store *fakeStore) http.Handler {
	t.Helper()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	disp := &dispatch.Dispatcher{Store: nil}
	return api.New(api.Config{OwnerKeys: func() []string { return []string{ownerKey} }}, directory.New(store, ""), tokens{}, disp)
}

func send(t *testing.T, h http.Handler, method, path, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("x-terminal-key", ownerKey)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func row() rowcall.Row {
	r := rowcall.NewRow("R", rowcall.TypeHTTP)
	r.Content, r.Category, r.Version = "# WHAT: a row", "c", 1
	return r
}

// A PATCH without If-Match that keeps losing the race re-reads and merges
// again each time: the patch lands on the newest version, and the other
// writer's edits are kept.
func TestPatchMergesAgainAfterLostRaces(t *testing.T) {
	store := &fakeStore{row: row(), races: 3}
	h := newAPI(t, store)
	w := send(t, h, "PATCH", "/api/directory/R", `{"planner_rank":7}`)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"version":5`) {
		t.Fatalf("PATCH: %d %s", w.Code, w.Body)
	}
	if store.replaces != 4 || store.row.PlannerRank != 7 || store.row.Category != "c+other+other+other" {
		t.Fatalf("%d replaces, row %+v", store.replaces, store.row)
	}
}

// With If-Match, a lost race is the caller's to resolve: 412 at once, with
// the current version, and nothing written.
func TestPatchWithIfMatchDoesNotRetry(t *testing.T) {
	store := &fakeStore{row: row(), races: 1}
	h := newAPI(t, store)
	w := send(t, h, "PATCH", "/api/directory/R", `{"planner_rank":7}`, "If-Match", `"1"`)
	if w.Code != 412 || !strings.Contains(w.Body.String(), `"error":"version_conflict"`) || !strings.Contains(w.Body.String(), `"current_version":2`) {
		t.Fatalf("PATCH: %d %s", w.Code, w.Body)
	}
	if store.replaces != 1 || store.row.PlannerRank == 7 {
		t.Fatalf("%d replaces, row %+v", store.replaces, store.row)
	}
}

// A write names the caller who made it (written_by): the owner's key as
// x-terminal-key or as a bearer token, whatever the body says; a body's
// written_by is read-only, ignored by PUT as version is and no field PATCH
// writes.
func TestWritesNameTheirCaller(t *testing.T) {
	store := &fakeStore{row: row()}
	h := newAPI(t, store)
	body := `{"type":"http","content":"# WHAT: a row","written_by":"person:per_forged"}`
	if w := send(t, h, "PUT", "/api/directory/R", body); w.Code != 200 || store.row.WrittenBy != "owner:terminal-key" {
		t.Fatalf("PUT: %d %s; written_by %q", w.Code, w.Body, store.row.WrittenBy)
	}
	if w := send(t, h, "PATCH", "/api/directory/R", `{"planner_rank":7}`, "x-terminal-key", "", "Authorization", "Bearer "+ownerKey); w.Code != 200 || store.row.WrittenBy != "owner:bearer" {
		t.Fatalf("PATCH: %d %s; written_by %q", w.Code, w.Body, store.row.WrittenBy)
	}
	for _, patch := range []string{`{"written_by":"person:per_forged"}`, `{"planner_rank":8,"written_by":"person:per_forged"}`} {
		if w := send(t, h, "PATCH", "/api/directory/R", patch); w.Code != 400 || !strings.Contains(w.Body.String(), "written_by") || store.row.PlannerRank != 7 {
			t.Fatalf("PATCH %s: %d %s", patch, w.Code, w.Body)
		}
	}
}

// A store that fails gives a 500 with the API's own words, never the cause
// (which may name the database and its address), and changes nothing.
func TestStoreFailureIsAnInternalError(t *testing.T) {
	store := &fakeStore{row: row(), fail: errors.New("dial tcp 10.1.2.3:8080: connection refused (authToken=secret)")}
	h := newAPI(t, store)
	for _, req := range [][3]string{{"GET", "/api/directory/R", ""}, {"PATCH", "/api/directory/R", `{"planner_rank":7}`}} {
		w := send(t, h, req[0], req[1], req[2])
		body := w.Body.String()
		if w.Code != 500 || !strings.Contains(body, `"error":"internal"`) || strings.Contains(body, "10.1.2.3") || strings.Contains(body, "secret") {
			t.Fatalf("%s %s: %d %s", req[0], req[1], w.Code, body)
		}
	}
	if store.replaces != 0 {
		t.Fatalf("%d replaces after a failed read", store.replaces)
	}
}

// A path the API does not serve is not_found with the routes under its first
// two segments, the registered ones themselves: what the caller may have meant.
func TestUnknownPathListsTheRoutesNearIt(t *testing.T) {
	h := newAPI(t, &fakeStore{})
	w := send(t, h, "GET", "/api/directory/X/oops", "")
	var got struct {
		Error  string   `json:"error"`
		Routes []string `json:"routes"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 404 || got.Error != "not_found" {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if !slices.Contains(got.Routes, "GET /api/directory/{key}") || slices.Contains(got.Routes, "POST /api/dispatch") {
		t.Fatalf("routes near /api/directory/X/oops: %q", got.Routes)
	}
	w = send(t, h, "GET", "/nothing", "")
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || !slices.Contains(got.Routes, "POST /api/dispatch") {
		t.Fatalf("routes for /nothing: %s", w.Body)
	}
}
