// Package migrations holds rowcall's schema as numbered .sql files and applies
// them in filename order, recording each in a d1_migrations table with the
// columns `wrangler d1 migrations apply` uses, so one database can be migrated by
// either tool and both agree on what is applied.
//
// Migrations are forward-only. Re-running is a no-op. A ledger entry with no
// matching file (a database migrated by a newer rowcall, or by hand) is refused.
//
// Apply applies what is pending and returns the names it applied; Names lists
// every migration in order and SQL returns one's text.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.sql
var files embed.FS

// ledgerDDL is the ledger exactly as wrangler creates it.
const ledgerDDL = `CREATE TABLE IF NOT EXISTS d1_migrations(
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)`

// Migration is one file and whether the database records it as applied.
type Migration struct {
	Name      string // file name, e.g. 0001_directory.sql
	AppliedAt string // "" when pending
}

// Names returns the embedded migration file names in the order they apply.
func Names() []string {
	entries, _ := fs.Glob(files, "*.sql")
	sort.Strings(entries)
	return entries
}

// SQL returns the text of one embedded migration.
func SQL(name string) (string, error) {
	b, err := files.ReadFile(name)
	return string(b), err
}

// List returns every migration, applied or pending, after checking the ledger
// against the files.
func List(ctx context.Context, db *sql.DB) ([]Migration, error) {
	if _, err := db.ExecContext(ctx, ledgerDDL); err != nil {
		return nil, fmt.Errorf("migrate: create d1_migrations: %w", err)
	}
	applied, err := ledger(ctx, db)
	if err != nil {
		return nil, err
	}
	names := Names()
	known := make(map[string]bool, len(names))
	var out []Migration
	for _, n := range names {
		known[n] = true
		out = append(out, Migration{Name: n, AppliedAt: applied[n]})
	}
	var drift []string
	for n := range applied {
		if !known[n] {
			drift = append(drift, n)
		}
	}
	if len(drift) > 0 {
		sort.Strings(drift)
		return nil, fmt.Errorf("migrate: the database's d1_migrations ledger records %s as applied, but this rowcall has no such file in migrations/; "+
			"the database was migrated by a newer rowcall or by hand. Run the rowcall that has those files, or restore them; nothing was changed",
			strings.Join(drift, ", "))
	}
	return out, nil
}

func ledger(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name, applied_at FROM d1_migrations`)
	if err != nil {
		return nil, fmt.Errorf("migrate: read d1_migrations: %w", err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var name, at string
		if err := rows.Scan(&name, &at); err != nil {
			return nil, err
		}
		m[name] = at
	}
	return m, rows.Err()
}

// Apply applies every pending migration in filename order and returns the names
// it applied. Each file and its ledger entry run as one SQL transaction on one
// connection (BEGIN … COMMIT in SQL text, never database/sql's BeginTx), so a
// failing file leaves neither its changes nor a ledger entry.
func Apply(ctx context.Context, db *sql.DB) ([]string, error) {
	list, err := List(ctx, db)
	if err != nil {
		return nil, err
	}
	var done []string
	for _, m := range list {
		if m.AppliedAt != "" {
			continue
		}
		if err := applyOne(ctx, db, m.Name); err != nil {
			return done, err
		}
		done = append(done, m.Name)
	}
	return done, nil
}

func applyOne(ctx context.Context, db *sql.DB, name string) error {
	text, err := SQL(name)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if _, err := conn.ExecContext(ctx, text); err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fmt.Errorf("migrate %s: %w; nothing from this file was applied", name, err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO d1_migrations (name) VALUES (?)`, name); err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fmt.Errorf("migrate %s: record in ledger: %w", name, err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fmt.Errorf("migrate %s: commit: %w", name, err)
	}
	return nil
}
