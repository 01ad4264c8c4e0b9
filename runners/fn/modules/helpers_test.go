package modules_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/modules"
	_ "modernc.org/sqlite"
)

// openDB opens a fresh SQLite file with migrations/0005_modules.sql applied.
func openDB(t testing.TB) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rowcall.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ddl, err := os.ReadFile("../../../migrations/0005_modules.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(ddl)); err != nil {
		t.Fatalf("apply 0005_modules.sql: %v", err)
	}
	return db
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
