package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/migrations"
)

func rowcallCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(binary, args...).CombinedOutput()
	return string(out), err
}

func TestMigrateTwiceIsANoOp(t *testing.T) {
	data := t.TempDir()
	out, err := rowcallCmd(t, "migrate", "--data", data)
	if err != nil {
		t.Fatal(out, err)
	}
	names := migrations.Names()
	for _, n := range names {
		if !strings.Contains(out, "applied "+n) {
			t.Fatalf("first migrate did not apply %s:\n%s", n, out)
		}
	}
	out, err = rowcallCmd(t, "migrate", "--data", data)
	if err != nil || !strings.Contains(out, "nothing to apply") {
		t.Fatalf("second migrate: %v\n%s", err, out)
	}
	out, err = rowcallCmd(t, "migrate", "list", "--data", data)
	if err != nil || strings.Count(out, "applied ") != len(names) || strings.Contains(out, "pending") {
		t.Fatalf("migrate list: %v\n%s", err, out)
	}
	// The ledger has wrangler's columns and one row per file.
	h := &host{Data: data}
	db := h.db(t)
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM d1_migrations WHERE id > 0 AND applied_at IS NOT NULL`).Scan(&n); err != nil || n != len(names) {
		t.Fatalf("ledger rows %d (%v), want %d", n, err, len(names))
	}
	// The table is the seed's: the CHECK constraint refuses a fifth type.
	if _, err := db.Exec(`INSERT INTO directory (key, type, updated_at) VALUES ('X', 'lambda', 'now')`); err == nil || !strings.Contains(err.Error(), "CHECK") {
		t.Fatalf("fifth type accepted: %v", err)
	}
}

func TestDriftedLedgerIsRefused(t *testing.T) {
	data := t.TempDir()
	if out, err := rowcallCmd(t, "migrate", "--data", data); err != nil {
		t.Fatal(out, err)
	}
	h := &host{Data: data}
	if _, err := h.db(t).Exec(`INSERT INTO d1_migrations (name) VALUES ('0099_from_the_future.sql')`); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"migrate", "--data", data}, {"migrate", "list", "--data", data}, {"serve", "--addr", "127.0.0.1:0", "--data", data}} {
		out, err := rowcallCmd(t, args...)
		if err == nil || !strings.Contains(out, "0099_from_the_future.sql") || !strings.Contains(out, "no such file") {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
}

func TestOwnerKeyFileIsPrivate(t *testing.T) {
	h := startHost(t, nil)
	st, err := os.Stat(filepath.Join(h.Data, "owner.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("owner.key mode %v (%v)", st.Mode(), err)
	}
	if !strings.HasPrefix(h.Key, "rk_") || len(h.Key) < 40 {
		t.Fatalf("owner key %q", h.Key)
	}
}
