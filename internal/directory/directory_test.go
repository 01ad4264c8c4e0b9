package directory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/directory"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// reason is the refusal's literal reason, as the API writes it in "error".
func reason(err error) string {
	var e *rowcall.Error
	if errors.As(err, &e) {
		return e.Reason()
	}
	return fmt.Sprint(err)
}

func newService(t *testing.T, prefix string) (*directory.Service, *int) {
	t.Helper()
	s := directory.New(sqlstore.New(testdb.Open(t)), prefix)
	changes := new(int)
	s.Subscribe(func() { *changes++ })
	return s, changes
}

// Every whole-row write passes the hygiene gate and the auth check, and
// changes nothing when refused; a write tells the subscribers.
func TestWritesPassTheRules(t *testing.T) {
	s, changes := newService(t, "ROWS_")
	ctx := context.Background()
	row := rowcall.NewRow("R", rowcall.TypeHTTP)
	for _, c := range []struct {
		content, auth string
		reason        string
	}{
		{"", "", "registry_hygiene_refused: missing_description"},
		{"# WHAT: r", "bearer:ROWCALL_RECEIPT_KEY", "auth_reserved_variable"},
		{"# WHAT: r", "bearer:OTHER_KEY", "auth_outside_secrets_prefix"},
	} {
		row.Content, row.Auth = c.content, c.auth
		if _, err := s.Create(ctx, row); reason(err) != c.reason {
			t.Fatalf("%+v: %v", c, err)
		}
	}
	// A hygiene refusal says what is wrong and how to fix it, as every refusal does.
	row.Sensitive = 1
	for _, c := range []struct{ content, message string }{
		{"", "content is empty: a row must say what it does"},
		{"# WHAT: r", "the row is sensitive but has no input_schema"},
	} {
		row.Content = c.content
		_, err := s.Create(ctx, row)
		var e *rowcall.Error
		if !errors.As(err, &e) || e.Code != rowcall.EHygiene || e.Message != c.message || e.HowToFix == "" {
			t.Fatalf("%q: %#v", c.content, err)
		}
	}
	row.Sensitive = 0
	if _, err := s.Lookup(ctx, "R"); rowcall.ErrorCode(err) != rowcall.ENotFound || *changes != 0 {
		t.Fatalf("a refused write left %v, %d changes", err, *changes)
	}
	row.Content, row.Auth = "# WHAT: r", "bearer:ROWS_KEY"
	if _, err := s.Create(ctx, row); err != nil || *changes != 1 {
		t.Fatalf("create: %v, %d changes", err, *changes)
	}
}

// A patch may not add a violation the row did not have, nor change auth to
// a refused column; it may keep an old violation.
func TestPatchRules(t *testing.T) {
	s, _ := newService(t, "")
	ctx := context.Background()
	row := rowcall.NewRow("R", rowcall.TypeHTTP)
	row.Content = "# WHAT: r"
	if _, err := s.Create(ctx, row); err != nil {
		t.Fatal(err)
	}
	set := func(f func(*rowcall.Row)) error {
		_, err := s.Patch(ctx, "R", 0, func(r *rowcall.Row) error { f(r); return nil })
		return err
	}
	if err := set(func(r *rowcall.Row) { r.Content = "" }); reason(err) != "registry_hygiene_refused: missing_description" {
		t.Fatalf("emptied content: %v", err)
	}
	if err := set(func(r *rowcall.Row) { r.Auth = "bearer:ROWCALL_DB_AUTH_TOKEN" }); reason(err) != "auth_reserved_variable" {
		t.Fatalf("reserved auth: %v", err)
	}
	if err := set(func(r *rowcall.Row) { r.PlannerRank = 7 }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Patch(ctx, "R", 1, func(r *rowcall.Row) error { return nil }); rowcall.ErrorCode(err) != rowcall.EVersionConflict {
		t.Fatalf("stale version: %v", err)
	}
	got, _ := s.Lookup(ctx, "R")
	if got.PlannerRank != 7 || got.Content != "# WHAT: r" || got.Auth != "" || got.Version != 2 {
		t.Fatalf("row %+v", got)
	}
}

// Every write names the context's writer, whatever the row said: a whole
// row's WrittenBy, a patch's change, an import's rows; a deletion too. With
// no writer in the context, a write names none.
func TestWritesNameTheContextsWriter(t *testing.T) {
	s, _ := newService(t, "")
	ctx := context.Background()
	as := func(actor string) context.Context { return rowcall.WithWriter(ctx, actor) }
	row := rowcall.NewRow("R", rowcall.TypeHTTP)
	row.Content, row.WrittenBy = "# WHAT: r", "person:per_forged"
	check := func(step string, out rowcall.Row, err error, want string) {
		t.Helper()
		if err != nil || out.WrittenBy != want {
			t.Fatalf("%s: written_by %q (%v), want %q", step, out.WrittenBy, err, want)
		}
		if got, _ := s.Lookup(ctx, out.Key); got.WrittenBy != want {
			t.Fatalf("%s: stored written_by %q, want %q", step, got.WrittenBy, want)
		}
	}
	out, err := s.Create(as("owner:terminal-key"), row)
	check("create", out, err, "owner:terminal-key")
	out, err = s.Replace(as("person:per_a"), row, 0)
	check("replace", out, err, "person:per_a")
	out, err = s.Patch(as("owner:bearer"), "R", 0, func(r *rowcall.Row) error { r.PlannerRank, r.WrittenBy = 7, "person:per_forged"; return nil })
	check("patch", out, err, "owner:bearer")
	out, err = s.Patch(ctx, "R", 0, func(r *rowcall.Row) error { r.PlannerRank = 8; return nil })
	check("patch with no writer", out, err, "")
	rows := []rowcall.Row{row}
	if err := s.Import(as("person:per_b"), rows); err != nil || rows[0].WrittenBy != "person:per_forged" {
		t.Fatalf("import: %v; the caller's row became %q", err, rows[0].WrittenBy)
	}
	out, err = s.Lookup(ctx, "R")
	check("import", out, err, "person:per_b")
	if err := s.Delete(as("person:per_c"), "R", 0); err != nil {
		t.Fatal(err)
	}
	ev, err := s.History(ctx, "R")
	if err != nil || len(ev) != 6 || ev[5].Action != "delete" {
		t.Fatalf("history: %+v %v", ev, err)
	}
	var deleted rowcall.Row
	if err := json.Unmarshal(ev[5].Before, &deleted); err != nil || deleted.WrittenBy != "person:per_c" {
		t.Fatalf("the deletion names %q (%v): %s", deleted.WrittenBy, err, ev[5].Before)
	}
}
