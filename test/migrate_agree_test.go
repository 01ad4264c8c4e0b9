package test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/migrations"
)

// ledgerNames returns the names in db's d1_migrations, in id order, and fails
// on a duplicate.
func ledgerNames(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM d1_migrations ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		if slices.Contains(names, n) {
			t.Fatalf("d1_migrations lists %s twice", n)
		}
		names = append(names, n)
	}
	return names
}

// schema returns the schema rowcall's migrations create (tables, indexes and
// triggers with their SQL), without the ledger and SQLite's or miniflare's
// own tables.
func schema(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT type, name, COALESCE(sql, '') FROM sqlite_master
		WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_migrations%' ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, text string
		rows.Scan(&typ, &name, &text)
		b.WriteString(typ + " " + name + ": " + normalizeSQL(text) + "\n")
	}
	return b.String()
}

// normalizeSQL drops -- comments (wrangler strips them from the statements it
// sends, so SQLite stores them without) and collapses white space.
func normalizeSQL(s string) string {
	var b strings.Builder
	inQuote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '\'' || c == '"':
			inQuote = c
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			c = ' '
		}
		b.WriteByte(c)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// `wrangler d1 migrations apply DB --local` applies migrations/ unchanged; its
// ledger names exactly the files rowcall's migrator applies, the schema is
// the one rowcall's migrator builds, and rowcall's migrator then has nothing
// to do. The other way round, a database migrated by rowcall is current for
// wrangler, which applies nothing.
func TestMigrationsAgreeWithWrangler(t *testing.T) {
	tool(t, "wrangler")
	ctx := context.Background()
	names := migrations.Names()

	// rowcall's migrator on an embedded file: the reference.
	ref := &host{Data: t.TempDir()}
	if out, err := rowcallCmd(t, "migrate", "--data", ref.Data); err != nil {
		t.Fatal(out, err)
	}
	refDB := ref.db(t)
	if got := ledgerNames(t, refDB); !slices.Equal(got, names) {
		t.Fatalf("rowcall's ledger %v, want %v", got, names)
	}
	want := schema(t, refDB)

	t.Run("wrangler first", func(t *testing.T) {
		persist := t.TempDir()
		out := wrangler(t, "d1", "migrations", "apply", "DB", "--local", "--persist-to", persist)
		for _, n := range names {
			if !strings.Contains(out, n) {
				t.Fatalf("wrangler did not report %s:\n%s", n, out)
			}
		}
		db := openD1(t, persist)
		if got := ledgerNames(t, db); !slices.Equal(got, names) {
			t.Fatalf("wrangler's ledger %v, want rowcall's names %v", got, names)
		}
		if got := schema(t, db); got != want {
			t.Fatalf("wrangler built another schema than rowcall's migrator:\n%s", lineDiff(want, got))
		}
		done, err := migrations.Apply(ctx, db)
		if err != nil || len(done) != 0 {
			t.Fatalf("rowcall's migrator on a database wrangler migrated applied %v (%v), want nothing", done, err)
		}
		list, err := migrations.List(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range list {
			if m.AppliedAt == "" {
				t.Fatalf("rowcall sees %s as pending", m.Name)
			}
		}
	})

	t.Run("rowcall first", func(t *testing.T) {
		persist := t.TempDir()
		// Have wrangler create its (empty) local database file, then migrate it with rowcall.
		wrangler(t, "d1", "execute", "DB", "--local", "--persist-to", persist, "--command", "SELECT 1")
		db := openD1(t, persist)
		done, err := migrations.Apply(ctx, db)
		if err != nil || !slices.Equal(done, names) {
			t.Fatalf("rowcall applied %v (%v), want %v", done, err, names)
		}
		db.Close()
		out := wrangler(t, "d1", "migrations", "list", "DB", "--local", "--persist-to", persist)
		if !strings.Contains(out, "No migrations to apply") {
			t.Fatalf("wrangler lists pending migrations on a database rowcall migrated:\n%s", out)
		}
		out = wrangler(t, "d1", "migrations", "apply", "DB", "--local", "--persist-to", persist)
		if !strings.Contains(out, "No migrations to apply") {
			t.Fatalf("wrangler applied migrations on a database rowcall migrated:\n%s", out)
		}
		db = openD1(t, persist)
		if got := ledgerNames(t, db); !slices.Equal(got, names) {
			t.Fatalf("ledger %v, want %v", got, names)
		}
		if got := schema(t, db); got != want {
			t.Fatalf("schema differs after both tools:\n%s", lineDiff(want, got))
		}
	})
}

// lineDiff lists the lines only in a (-) and only in b (+).
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// `rowcall migrate --db URL` migrates a libSQL server, once: the second run and
// `migrate list` find everything applied.
func TestMigrateOnSqld(t *testing.T) {
	url := startSqld(t)
	out, err := rowcallCmd(t, "migrate", "--data", t.TempDir(), "--db", url)
	if err != nil {
		t.Fatal(out, err)
	}
	for _, n := range migrations.Names() {
		if !strings.Contains(out, "applied "+n) {
			t.Fatalf("migrate did not apply %s:\n%s", n, out)
		}
	}
	if out, err = rowcallCmd(t, "migrate", "--data", t.TempDir(), "--db", url); err != nil || !strings.Contains(out, "nothing to apply") {
		t.Fatalf("second migrate: %v\n%s", err, out)
	}
	if out, err = rowcallCmd(t, "migrate", "list", "--data", t.TempDir(), "--db", url); err != nil ||
		strings.Count(out, "applied ") != len(migrations.Names()) || strings.Contains(out, "pending") {
		t.Fatalf("migrate list: %v\n%s", err, out)
	}
}
