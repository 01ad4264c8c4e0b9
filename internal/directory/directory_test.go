package directory_test

import (
	"context"
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
