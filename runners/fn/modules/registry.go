package modules

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rowcall/rowcall"
)

// Registry is the module registry over database/sql and a BlobStore. It is safe
// for concurrent use and never opens a transaction.
type Registry struct {
	db    *sql.DB
	blobs BlobStore
	now   func() time.Time

	mu       sync.RWMutex
	compiler Compiler

	getStmt atomic.Pointer[sql.Stmt] // Get's statement, prepared on first use: every fn call resolves
}

// NewRegistry returns a registry whose metadata is db's modules table and whose
// bytes are in blobs. Until SetCompiler, Put compiles modules with a private
// wazero runtime and does not link them.
func NewRegistry(db *sql.DB, blobs BlobStore) *Registry {
	return &Registry{db: db, blobs: blobs, now: time.Now, compiler: &compileOnly{}}
}

// Close releases the registry's prepared statement; the database stays open.
func (r *Registry) Close() error {
	if s := r.getStmt.Swap(nil); s != nil {
		return s.Close()
	}
	return nil
}

// SetCompiler makes c the registry's compiler (the fn runner does this in New).
func (r *Registry) SetCompiler(c Compiler) {
	r.mu.Lock()
	r.compiler = c
	r.mu.Unlock()
}

const columns = `name, digest, size, version, created_at, updated_at`

// Put registers wasm under name, replacing the module's code if it has
// changed (version goes up by one) and returning the module unchanged if the
// bytes are the same. The bytes are checked first (see Check).
func (r *Registry) Put(ctx context.Context, name string, wasm []byte) (Module, error) {
	return r.put(ctx, name, wasm, -1)
}

// PutIf is Put with optimistic concurrency: version is the version the caller
// last read (an HTTP If-Match), or 0 to create a module that must not exist yet.
// A module changed or created in between is refused with rowcall.EVersionConflict.
func (r *Registry) PutIf(ctx context.Context, name string, wasm []byte, version int64) (Module, error) {
	if version < 0 {
		return Module{}, rowcall.Errorf(rowcall.EInvalid, "module version %d is not valid: pass the version last read, or 0 to create", version)
	}
	return r.put(ctx, name, wasm, version)
}

func (r *Registry) put(ctx context.Context, name string, wasm []byte, version int64) (Module, error) {
	digest, err := r.Check(ctx, name, wasm)
	if err != nil {
		return Module{}, err
	}
	old, err := r.Get(ctx, name)
	if err != nil && rowcall.ErrorCode(err) != rowcall.ENotFound {
		return Module{}, err
	}
	if err := r.blobs.Put(ctx, digest, wasm); err != nil {
		return Module{}, rowcall.Errorf(rowcall.EInternal, "store module %s's bytes: %v", name, err)
	}
	m, err := r.writeMeta(ctx, name, digest, int64(len(wasm)), version)
	for try := 0; errors.Is(err, errRaced) && try < 3; try++ {
		m, err = r.writeMeta(ctx, name, digest, int64(len(wasm)), version)
	}
	if errors.Is(err, errRaced) {
		err = rowcall.Errorf(rowcall.EVersionConflict, "module %s is being changed by other requests at the same time; send it again", name)
	}
	if err != nil {
		return Module{}, err
	}
	// A concurrent Delete of another module with the same bytes may have
	// collected the blob between our write and the metadata; put it back
	// (collect says why both sides check).
	if ok, err := r.blobs.Has(ctx, digest); err == nil && !ok {
		if err := r.blobs.Put(ctx, digest, wasm); err != nil {
			return Module{}, rowcall.Errorf(rowcall.EInternal, "store module %s's bytes: %v", name, err)
		}
	}
	if old.Digest != "" && old.Digest != digest {
		r.collect(ctx, old.Digest)
	}
	return m, nil
}

// writeMeta writes the metadata row in one statement. version -1 means
// unconditional, 0 create-only, n > 0 replace only at version n.
func (r *Registry) writeMeta(ctx context.Context, name, digest string, size, version int64) (Module, error) {
	now := r.now().UTC().Format("2006-01-02T15:04:05.000Z")
	var row *sql.Row
	switch {
	case version < 0:
		// The WHERE makes re-putting the same bytes a no-op that returns no row.
		row = r.db.QueryRowContext(ctx, `INSERT INTO modules (`+columns+`) VALUES (?, ?, ?, 1, ?, ?)
			ON CONFLICT (name) DO UPDATE SET digest = excluded.digest, size = excluded.size,
				version = modules.version + 1, updated_at = excluded.updated_at
			WHERE modules.digest <> excluded.digest
			RETURNING `+columns, name, digest, size, now, now)
	case version == 0:
		row = r.db.QueryRowContext(ctx, `INSERT INTO modules (`+columns+`) VALUES (?, ?, ?, 1, ?, ?)
			ON CONFLICT (name) DO NOTHING RETURNING `+columns, name, digest, size, now, now)
	default:
		row = r.db.QueryRowContext(ctx, `UPDATE modules SET digest = ?, size = ?,
				version = version + CASE WHEN digest = ? THEN 0 ELSE 1 END, updated_at = ?
			WHERE name = ? AND version = ? RETURNING `+columns, digest, size, digest, now, name, version)
	}
	m, err := scan(row)
	if !errors.Is(err, sql.ErrNoRows) {
		if err != nil {
			return Module{}, rowcall.Errorf(rowcall.EInternal, "write module %s: %v", name, err)
		}
		return m, nil
	}
	cur, err := r.Get(ctx, name)
	switch {
	case version < 0 && err == nil && cur.Digest == digest:
		return cur, nil // same bytes: unchanged
	case version < 0:
		return Module{}, errRaced // another Put or a Delete landed in between: try again
	case version > 0 && rowcall.ErrorCode(err) == rowcall.ENotFound:
		return Module{}, err
	case err != nil && rowcall.ErrorCode(err) != rowcall.ENotFound:
		return Module{}, err
	}
	return Module{}, &rowcall.Error{
		Code:     rowcall.EVersionConflict,
		Message:  fmt.Sprintf("module %s changed since version %d was read (it is at version %d now)", name, version, cur.Version),
		HowToFix: "read the module again (GET /api/modules/" + name + "), then resend with its current version",
		Extra:    map[string]any{"module": name, "expected": version, "current": cur.Version},
	}
}

// Check applies every registration rule to wasm without storing anything and
// returns its digest: a valid name, a size within MaxSize, a core WebAssembly
// module that is a WASI command importing only what the sandbox offers, and
// compiling (and, with the fn runner as compiler, linking) in the sandbox.
func (r *Registry) Check(ctx context.Context, name string, wasm []byte) (digest string, err error) {
	if !ValidName(name) {
		return "", &rowcall.Error{Code: CodeBadName, Message: "module name " + quote(name) + " is not valid", HowToFix: "use " + NameRule}
	}
	if len(wasm) == 0 {
		return "", &rowcall.Error{Code: CodeNotWasm, Message: "the module body is empty", HowToFix: "send the compiled .wasm file's bytes as the request body"}
	}
	if len(wasm) > MaxSize {
		return "", &rowcall.Error{
			Code:     rowcall.ETooLarge,
			Message:  fmt.Sprintf("module is %d bytes; the registry accepts at most %d (8 MiB)", len(wasm), MaxSize),
			HowToFix: "strip debug information (clang -s, go build -ldflags='-s -w', wasm-opt --strip-debug) or move work out of the module",
		}
	}
	info, err := Inspect(wasm)
	if err != nil {
		return "", err
	}
	if err := info.check(); err != nil {
		return "", err
	}
	sum := sha256.Sum256(wasm)
	digest = hex.EncodeToString(sum[:])
	r.mu.RLock()
	c := r.compiler
	r.mu.RUnlock()
	if err := c.Check(ctx, digest, wasm); err != nil {
		var re *rowcall.Error
		if errors.As(err, &re) {
			return "", err
		}
		return "", &rowcall.Error{
			Code:     CodeInvalid,
			Message:  "module does not compile: " + firstLine(err.Error()),
			HowToFix: "check that it was built for wasm32-wasip1 with a current toolchain and uploaded whole; see wasm/ABI.md",
		}
	}
	return digest, nil
}

const getQuery = `SELECT ` + columns + ` FROM modules WHERE name = ?`

// Get returns the named module.
func (r *Registry) Get(ctx context.Context, name string) (Module, error) {
	stmt := r.getStmt.Load()
	if stmt == nil {
		if s, err := r.db.PrepareContext(ctx, getQuery); err == nil {
			if r.getStmt.CompareAndSwap(nil, s) {
				stmt = s
			} else {
				s.Close()
				stmt = r.getStmt.Load()
			}
		}
	}
	var row *sql.Row
	if stmt != nil {
		row = stmt.QueryRowContext(ctx, name)
	} else {
		row = r.db.QueryRowContext(ctx, getQuery, name)
	}
	m, err := scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Module{}, notFound(name)
	}
	if err != nil {
		return Module{}, rowcall.Errorf(rowcall.EInternal, "read module %s: %v", name, err)
	}
	return m, nil
}

// List returns every module, by name.
func (r *Registry) List(ctx context.Context) ([]Module, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT `+columns+` FROM modules ORDER BY name`)
	if err != nil {
		return nil, rowcall.Errorf(rowcall.EInternal, "list modules: %v", err)
	}
	defer rows.Close()
	out := []Module{}
	for rows.Next() {
		m, err := scan(rows)
		if err != nil {
			return nil, rowcall.Errorf(rowcall.EInternal, "list modules: %v", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, rowcall.Errorf(rowcall.EInternal, "list modules: %v", err)
	}
	return out, nil
}

// Resolve returns the module an fn row's target names: "name", or
// "name@sha256:<hex>", which must match the module's current digest.
func (r *Registry) Resolve(ctx context.Context, target string) (Module, error) {
	name, pin, err := ParseTarget(target)
	if err != nil {
		return Module{}, err
	}
	m, err := r.Get(ctx, name)
	if err != nil {
		return Module{}, err
	}
	if pin != "" && pin != m.Digest {
		return Module{}, &rowcall.Error{
			Code:     CodeDigestMismatch,
			Message:  "fn target pins module " + name + " to sha256:" + pin + ", but its code is now sha256:" + m.Digest,
			HowToFix: "re-pin the row's target to " + m.Ref() + " after reviewing the new code, or PUT the pinned bytes back",
			Extra:    map[string]any{"module": name, "pinned": pin, "current": m.Digest},
		}
	}
	return m, nil
}

// Bytes returns m's bytes from the blob store, verified against its digest.
func (r *Registry) Bytes(ctx context.Context, m Module) ([]byte, error) {
	b, err := r.blobs.Get(ctx, m.Digest)
	if err == nil {
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != m.Digest {
			err = errors.New("the stored bytes do not match the digest")
		}
	}
	if err != nil {
		return nil, &rowcall.Error{
			Code:     CodeBlobMissing,
			Message:  "module " + m.Name + "'s bytes (sha256:" + m.Digest + ") cannot be read: " + err.Error(),
			HowToFix: "PUT the module again (PUT /api/modules/" + m.Name + "); its metadata is intact",
			Extra:    map[string]any{"module": m.Name, "digest": m.Digest},
		}
	}
	return b, nil
}

// Delete removes the named module. usedBy is the keys of the fn rows whose
// target names it; while there are any, Delete refuses and lists them.
func (r *Registry) Delete(ctx context.Context, name string, usedBy []string) error {
	if len(usedBy) > 0 {
		return &rowcall.Error{
			Code:     CodeInUse,
			Message:  fmt.Sprintf("module %s is used by %d fn row(s): %s", name, len(usedBy), strings.Join(usedBy, ", ")),
			HowToFix: "point those rows' target at another module, or delete the rows, then delete the module",
			Extra:    map[string]any{"module": name, "rows": usedBy},
		}
	}
	var digest string
	err := r.db.QueryRowContext(ctx, `DELETE FROM modules WHERE name = ? RETURNING digest`, name).Scan(&digest)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(name)
	}
	if err != nil {
		return rowcall.Errorf(rowcall.EInternal, "delete module %s: %v", name, err)
	}
	r.collect(ctx, digest)
	return nil
}

// collect deletes a blob no module uses any more. It is best effort: an
// orphaned blob costs space only.
//
// The metadata and the blobs share no transaction (on the worker the blobs
// are in R2), so a Put of the same bytes under another name can land between
// the check and the delete. Each side re-checks after its own write: put
// stores the blob again if it is gone once its metadata is written, and
// collect stores it again if a module uses it once the blob is deleted.
// Whichever write comes last sees the other's, so a module never keeps
// metadata whose bytes are gone (TestCollectRacingPut).
func (r *Registry) collect(ctx context.Context, digest string) {
	if used, err := r.used(ctx, digest); err != nil || used {
		return
	}
	data, err := r.blobs.Get(ctx, digest)
	if err != nil {
		return // already gone, or unreadable: nothing to put back either way
	}
	if err := r.blobs.Delete(ctx, digest); err != nil {
		return
	}
	if used, err := r.used(ctx, digest); err != nil || used {
		_ = r.blobs.Put(ctx, digest, data)
	}
}

// used reports whether a module's metadata names digest.
func (r *Registry) used(ctx context.Context, digest string) (bool, error) {
	var used bool
	err := r.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM modules WHERE digest = ?)`, digest).Scan(&used)
	return used, err
}

// errRaced is writeMeta's "a concurrent write landed between the upsert and
// the read-back"; put retries.
var errRaced = errors.New("modules: concurrent write")

type scanner interface{ Scan(dest ...any) error }

func scan(s scanner) (Module, error) {
	var m Module
	err := s.Scan(&m.Name, &m.Digest, &m.Size, &m.Version, &m.CreatedAt, &m.UpdatedAt)
	return m, err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
