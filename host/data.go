package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlite"
)

// openData opens the database under dir and applies pending migrations.
func openData(ctx context.Context, dir string) (*sql.DB, []string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	db, err := sqlite.Open(filepath.Join(dir, "rowcall.db"))
	if err != nil {
		return nil, nil, err
	}
	applied, err := migrations.Apply(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, applied, nil
}

// ownerKey returns the owner key: $ROWCALL_OWNER_KEY, else DATA/owner.key, else a
// new key written there with mode 0600 (created reports that).
func ownerKey(dir string) (key string, created bool, err error) {
	if k := strings.TrimSpace(os.Getenv("ROWCALL_OWNER_KEY")); k != "" {
		return k, false, nil
	}
	path := filepath.Join(dir, "owner.key")
	b, err := os.ReadFile(path)
	if err == nil {
		if k := strings.TrimSpace(string(b)); k != "" {
			return k, false, nil
		}
		return "", false, fmt.Errorf("%s is empty; delete it to have a new key generated, or set ROWCALL_OWNER_KEY", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	key = "rk_" + base64.RawURLEncoding.EncodeToString(raw)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, err
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", false, err
	}
	return key, true, nil
}
