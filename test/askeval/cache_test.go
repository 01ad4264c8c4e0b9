package askeval

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// storeVersion changes when what NewStore writes changes in a way the
// migrations and rows do not show (CachedStore's key).
const storeVersion = "1"

// CachedStore is NewStore's store for rows, built once and kept under
// cacheDir as a database file named by a hash of the migrations, the rows and
// storeVersion (a 100,000-row store takes minutes to build; opening it,
// under a second). Any other file CachedStore built there for as many rows is
// removed. The store is for reading: a caller that writes to it changes the
// cached file for the next run.
func CachedStore(ctx context.Context, cacheDir string, rows []rowcall.Row) (*sqlstore.Store, *sql.DB, error) {
	h := sha256.New()
	fmt.Fprintln(h, storeVersion)
	for _, name := range migrations.Names() {
		text, err := migrations.SQL(name)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintln(h, name, len(text))
		io.WriteString(h, text)
	}
	if err := json.NewEncoder(h).Encode(rows); err != nil {
		return nil, nil, err
	}
	prefix := fmt.Sprintf("store-%d-", len(rows))
	file := filepath.Join(cacheDir, prefix+hex.EncodeToString(h.Sum(nil))[:16]+".db")
	if _, err := os.Stat(file); err == nil {
		db, err := sqlite.Open(file)
		if err != nil {
			return nil, nil, err
		}
		store := sqlstore.New(db)
		store.MaxParams = sqlite.MaxParams
		return store, db, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, nil, err
	}
	old, _ := filepath.Glob(filepath.Join(cacheDir, prefix+"*"))
	for _, f := range old {
		os.Remove(f)
	}
	tmp, err := os.MkdirTemp(cacheDir, ".build-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	_, db, err := NewStore(ctx, tmp, rows)
	if err != nil {
		return nil, nil, err
	}
	// One file, no WAL beside it, then renamed into place whole.
	_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	if err == nil {
		_, err = db.ExecContext(ctx, `PRAGMA journal_mode=DELETE`)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(filepath.Join(tmp, "askeval.db"), file)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("askeval: caching the store: %w", err)
	}
	return CachedStore(ctx, cacheDir, rows)
}

// StoreCacheDir is where the tests keep CachedStore's files: the user's cache
// directory, rowcall/askeval-stores.
func StoreCacheDir() (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(c, "rowcall", "askeval-stores"), nil
}
