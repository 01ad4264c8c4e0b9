package modules_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/runners/fn/modules"
	_ "modernc.org/sqlite"
)

// openDB opens a fresh, migrated SQLite file.
func openDB(t testing.TB) *sql.DB {
	t.Helper()
	return testdb.Open(t)
}

func newRegistry(t testing.TB) (*modules.Registry, *sql.DB) {
	db := openDB(t)
	return modules.NewRegistry(db, modules.NewSQLBlobs(db)), db
}

// wantCode fails unless err is a *rowcall.Error with code.
func wantCode(t *testing.T, err error, code rowcall.Code) *rowcall.Error {
	t.Helper()
	var re *rowcall.Error
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T); want a *rowcall.Error with code %s", err, err, code)
	}
	if re.Code != code {
		t.Fatalf("code %s (%v); want %s", re.Code, err, code)
	}
	if re.Message == "" || re.HowToFix == "" && code != rowcall.EVersionConflict {
		t.Errorf("error %s lacks a message or a how-to-fix: %+v", code, re)
	}
	return re
}

var ctx = context.Background()
