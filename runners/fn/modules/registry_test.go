package modules_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/modules"
)

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestPutGetList(t *testing.T) {
	reg, _ := newRegistry(t)
	reg.SetClock(func() time.Time { return time.Date(2026, 7, 26, 4, 36, 19, 832e6, time.UTC) })
	echo, now := example("echo"), example("now")

	m, err := reg.Put(ctx, "echo", echo)
	if err != nil {
		t.Fatal(err)
	}
	want := modules.Module{Name: "echo", Digest: digestOf(echo), Size: int64(len(echo)), Version: 1,
		CreatedAt: "2026-07-26T04:36:19.832Z", UpdatedAt: "2026-07-26T04:36:19.832Z"}
	if m != want {
		t.Fatalf("Put = %+v; want %+v", m, want)
	}
	if got, err := reg.Get(ctx, "echo"); err != nil || got != want {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, want)
	}

	// The same bytes again: unchanged, same version.
	if again, err := reg.Put(ctx, "echo", echo); err != nil || again != want {
		t.Fatalf("re-Put of the same bytes = %+v, %v; want it unchanged", again, err)
	}

	// New bytes: version 2, new digest, created_at kept.
	reg.SetClock(func() time.Time { return time.Date(2026, 7, 27, 0, 0, 0, 0, time.UTC) })
	m2, err := reg.Put(ctx, "echo", now)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Version != 2 || m2.Digest != digestOf(now) || m2.CreatedAt != want.CreatedAt || m2.UpdatedAt != "2026-07-27T00:00:00.000Z" {
		t.Fatalf("replacing Put = %+v", m2)
	}
	got, err := reg.Bytes(ctx, m2)
	if err != nil || !bytes.Equal(got, now) {
		t.Fatalf("Bytes = %d bytes, %v; want the new code", len(got), err)
	}

	if _, err := reg.Put(ctx, "now", now); err != nil {
		t.Fatal(err)
	}
	list, err := reg.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list {
		names = append(names, m.Name)
	}
	if !slices.Equal(names, []string{"echo", "now"}) {
		t.Fatalf("List names = %v", names)
	}
}

func TestPutRefuses(t *testing.T) {
	reg, _ := newRegistry(t)
	tests := []struct {
		name, module string
		wasm         []byte
		code         rowcall.Code
		says         string
	}{
		{"forbidden import", "forbidden", example("forbidden"), modules.CodeForbiddenImport,
			"module imports env.foo, which the rowcall sandbox does not offer"},
		{"not wasm", "notwasm", example("notwasm"), modules.CodeNotWasm, "not WebAssembly"},
		{"empty", "empty", nil, modules.CodeNotWasm, "empty"},
		{"no _start", "reactor", example("reactor"), modules.CodeNotCommand, "exports no _start"},
		{"too large", "big", append(slices.Clone(example("echo")), make([]byte, modules.MaxSize)...), rowcall.ETooLarge, "at most 8388608"},
		{"bad name", "Echo", example("echo"), modules.CodeBadName, `"Echo" is not valid`},
		{"name with @", "echo@x", example("echo"), modules.CodeBadName, "is not valid"},
		{"truncated", "half", example("now")[:5000], modules.CodeNotWasm, "not a well-formed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reg.Put(ctx, tt.module, tt.wasm)
			re := wantCode(t, err, tt.code)
			if !strings.Contains(re.Message, tt.says) {
				t.Errorf("message %q; want it to say %q", re.Message, tt.says)
			}
			if _, err := reg.Get(ctx, tt.module); rowcall.ErrorCode(err) != rowcall.ENotFound && tt.code != modules.CodeBadName {
				t.Errorf("a refused module was stored: %v", err)
			}
		})
	}
}

func TestForbiddenImportNamesEveryImport(t *testing.T) {
	reg, _ := newRegistry(t)
	_, err := reg.Put(ctx, "forbidden", example("forbidden"))
	re := wantCode(t, err, modules.CodeForbiddenImport)
	if got := re.Extra["imports"]; !slices.Equal(got.([]string), []string{"env.foo"}) {
		t.Errorf("Extra[imports] = %v", got)
	}
	if !strings.Contains(re.HowToFix, "wasm/ABI.md") {
		t.Errorf("how-to-fix %q does not point at the ABI", re.HowToFix)
	}
}

func TestResolve(t *testing.T) {
	reg, _ := newRegistry(t)
	m, err := reg.Put(ctx, "echo", example("echo"))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("ab", 32)
	tests := []struct {
		target string
		code   rowcall.Code // "" for success
	}{
		{"echo", ""},
		{" echo ", ""},
		{"echo@sha256:" + m.Digest, ""},
		{"echo@sha256:" + strings.ToUpper(m.Digest), ""},
		{"echo@sha256:" + other, modules.CodeDigestMismatch},
		{"nope", rowcall.ENotFound},
		{"nope@sha256:" + m.Digest, rowcall.ENotFound},
		{"echo@sha1:" + m.Digest[:40], modules.CodeBadTarget},
		{"echo@sha256:abc", modules.CodeBadTarget},
		{"echo@", modules.CodeBadTarget},
		{"", modules.CodeBadTarget},
		{"ECHO", modules.CodeBadTarget},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			got, err := reg.Resolve(ctx, tt.target)
			if tt.code == "" {
				if err != nil || got != m {
					t.Fatalf("Resolve = %+v, %v; want %+v", got, err, m)
				}
				return
			}
			re := wantCode(t, err, tt.code)
			if tt.code == modules.CodeDigestMismatch && (re.Extra["pinned"] != other || re.Extra["current"] != m.Digest) {
				t.Errorf("mismatch extra = %v", re.Extra)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	reg, db := newRegistry(t)
	echo := example("echo")
	if _, err := reg.Put(ctx, "echo", echo); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Put(ctx, "echo2", echo); err != nil { // same bytes, second name
		t.Fatal(err)
	}

	err := reg.Delete(ctx, "echo", []string{"ECHO", "SHOUT"})
	re := wantCode(t, err, modules.CodeInUse)
	if !strings.Contains(re.Message, "ECHO, SHOUT") || !slices.Equal(re.Extra["rows"].([]string), []string{"ECHO", "SHOUT"}) {
		t.Errorf("refusal does not list the rows: %v %v", re.Message, re.Extra)
	}
	if _, err := reg.Get(ctx, "echo"); err != nil {
		t.Fatalf("a refused delete removed the module: %v", err)
	}

	if err := reg.Delete(ctx, "echo", nil); err != nil {
		t.Fatal(err)
	}
	wantCode(t, reg.Delete(ctx, "echo", nil), rowcall.ENotFound)
	if blobRows(t, db) != 1 {
		t.Fatal("the blob echo2 still uses was collected")
	}
	if err := reg.Delete(ctx, "echo2", nil); err != nil {
		t.Fatal(err)
	}
	if n := blobRows(t, db); n != 0 {
		t.Fatalf("%d blob rows left after the last user was deleted", n)
	}
}

func TestReplaceCollectsOldBlob(t *testing.T) {
	reg, db := newRegistry(t)
	if _, err := reg.Put(ctx, "m", example("echo")); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Put(ctx, "m", example("loop")); err != nil {
		t.Fatal(err)
	}
	if n := blobRows(t, db); n != 1 {
		t.Fatalf("%d blob rows after replacing; want only the new code's", n)
	}
}

func TestPutIf(t *testing.T) {
	reg, _ := newRegistry(t)
	echo, loop := example("echo"), example("loop")
	m, err := reg.PutIf(ctx, "m", echo, 0)
	if err != nil || m.Version != 1 {
		t.Fatalf("create with PutIf 0 = %+v, %v", m, err)
	}
	wantCode(t, second(reg.PutIf(ctx, "m", loop, 0)), rowcall.EVersionConflict)
	wantCode(t, second(reg.PutIf(ctx, "m", loop, 7)), rowcall.EVersionConflict)
	m, err = reg.PutIf(ctx, "m", loop, 1)
	if err != nil || m.Version != 2 || m.Digest != digestOf(loop) {
		t.Fatalf("PutIf at the current version = %+v, %v", m, err)
	}
	m, err = reg.PutIf(ctx, "m", loop, 2) // same bytes: version stays
	if err != nil || m.Version != 2 {
		t.Fatalf("PutIf with the same bytes = %+v, %v", m, err)
	}
	wantCode(t, second(reg.PutIf(ctx, "absent", loop, 3)), rowcall.ENotFound)
}

func second(_ modules.Module, err error) error { return err }

// blobRows counts the distinct blobs in module_blobs.
func blobRows(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(DISTINCT digest) FROM module_blobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConcurrentWrites: Puts and Deletes racing on shared bytes and names
// leave every remaining module readable, without a transaction anywhere.
func TestConcurrentWrites(t *testing.T) {
	reg, _ := newRegistry(t)
	codes := [][]byte{example("echo"), example("loop"), example("trap")}
	done := make(chan error)
	for g := range 8 {
		go func() {
			var err error
			for i := range 20 {
				name := []string{"shared", "a", "b"}[g%3]
				if _, err = reg.Put(ctx, name, codes[(g+i)%3]); err != nil && rowcall.ErrorCode(err) != rowcall.EVersionConflict {
					break
				}
				err = nil
				if g%3 != 0 && i%2 == 0 {
					if err = reg.Delete(ctx, name, nil); rowcall.ErrorCode(err) == rowcall.ENotFound {
						err = nil
					}
				}
				if err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	list, err := reg.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if _, err := reg.Bytes(ctx, m); err != nil {
			t.Errorf("module %s lost its bytes: %v", m.Name, err)
		}
	}
}

// hookBlobs runs beforeDelete once, just before the first Delete reaches the store.
type hookBlobs struct {
	modules.BlobStore
	beforeDelete func()
}

func (h *hookBlobs) Delete(ctx context.Context, digest string) error {
	if f := h.beforeDelete; f != nil {
		h.beforeDelete = nil
		f()
	}
	return h.BlobStore.Delete(ctx, digest)
}

// TestCollectRacingPut: a Delete's collection has found its blob unused when a
// Put of the same bytes under another name runs to the end; the blob is then
// deleted. The module the Put made must still read its bytes.
func TestCollectRacingPut(t *testing.T) {
	db := openDB(t)
	blobs := &hookBlobs{BlobStore: modules.NewSQLBlobs(db)}
	reg := modules.NewRegistry(db, blobs)
	code := example("echo")
	if _, err := reg.Put(ctx, "a", code); err != nil {
		t.Fatal(err)
	}
	var putErr error
	blobs.beforeDelete = func() { _, putErr = reg.Put(ctx, "b", code) }
	if err := reg.Delete(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	if putErr != nil {
		t.Fatal(putErr)
	}
	b, err := reg.Get(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := reg.Bytes(ctx, b); err != nil || !bytes.Equal(got, code) {
		t.Fatalf("module b after the race: %d bytes, %v; want its %d bytes", len(got), err, len(code))
	}
}
