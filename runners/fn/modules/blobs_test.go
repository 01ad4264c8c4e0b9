package modules_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/rowcall/rowcall/runners/fn/modules"
)

func TestBlobStores(t *testing.T) {
	stores := map[string]modules.BlobStore{"sql": modules.NewSQLBlobs(openDB(t))}
	sizes := []int{1, modules.ChunkSize - 1, modules.ChunkSize, modules.ChunkSize + 1, 2*modules.ChunkSize + 17}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			for _, size := range sizes {
				data := make([]byte, size)
				rand.Read(data)
				d := digestOf(data)
				if ok, err := s.Has(ctx, d); ok || err != nil {
					t.Fatalf("Has before Put = %v, %v", ok, err)
				}
				if _, err := s.Get(ctx, d); !errors.Is(err, modules.ErrBlobNotFound) {
					t.Fatalf("Get before Put: %v; want ErrBlobNotFound", err)
				}
				for range 2 { // the second Put is a no-op
					if err := s.Put(ctx, d, data); err != nil {
						t.Fatalf("Put %d bytes: %v", size, err)
					}
				}
				got, err := s.Get(ctx, d)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("Get %d bytes: %d bytes back, %v", size, len(got), err)
				}
				if ok, err := s.Has(ctx, d); !ok || err != nil {
					t.Fatalf("Has after Put = %v, %v", ok, err)
				}
				if err := s.Delete(ctx, d); err != nil {
					t.Fatal(err)
				}
				if err := s.Delete(ctx, d); err != nil {
					t.Fatalf("deleting an absent blob: %v", err)
				}
				if ok, _ := s.Has(ctx, d); ok {
					t.Fatal("Has after Delete")
				}
			}
			if err := s.Put(ctx, "../../etc/passwd", []byte("x")); err == nil {
				t.Fatal("Put accepted a digest that is a path")
			}
		})
	}
}

// TestSQLBlobsChunks: a blob over D1's 2,000,000-byte value cap is stored in
// rows of at most ChunkSize bytes, and a missing chunk reads as not found.
func TestSQLBlobsChunks(t *testing.T) {
	db := openDB(t)
	s := modules.NewSQLBlobs(db)
	data := make([]byte, 2*modules.ChunkSize+5)
	rand.Read(data)
	d := digestOf(data)
	if err := s.Put(ctx, d, data); err != nil {
		t.Fatal(err)
	}
	var rows, biggest int
	if err := db.QueryRow(`SELECT COUNT(*), MAX(length(data)) FROM module_blobs WHERE digest = ?`, d).Scan(&rows, &biggest); err != nil {
		t.Fatal(err)
	}
	if rows != 3 || biggest > modules.ChunkSize {
		t.Fatalf("%d rows, biggest %d bytes; want 3 rows of at most %d", rows, biggest, modules.ChunkSize)
	}
	if _, err := db.Exec(`DELETE FROM module_blobs WHERE digest = ? AND chunk = 1`, d); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Has(ctx, d); ok {
		t.Fatal("Has reports a blob with a missing chunk as complete")
	}
	if _, err := s.Get(ctx, d); !errors.Is(err, modules.ErrBlobNotFound) {
		t.Fatalf("Get of a blob with a missing chunk: %v", err)
	}
	if err := s.Put(ctx, d, data); err != nil { // completes it
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after re-Put: %v", err)
	}
}

// TestBytesVerifiesDigest: bytes that do not hash to the digest are refused.
func TestBytesVerifiesDigest(t *testing.T) {
	db := openDB(t)
	blobs := modules.NewSQLBlobs(db)
	reg := modules.NewRegistry(db, blobs)
	m, err := reg.Put(ctx, "echo", example("echo"))
	if err != nil {
		t.Fatal(err)
	}
	blobs.Delete(ctx, m.Digest)
	blobs.Put(ctx, m.Digest, []byte("tampered"))
	_, err = reg.Bytes(ctx, m)
	wantCode(t, err, modules.CodeBlobMissing)

	blobs.Delete(ctx, m.Digest)
	_, err = reg.Bytes(ctx, m)
	if re := wantCode(t, err, modules.CodeBlobMissing); re.Extra["digest"] != m.Digest {
		t.Errorf("extra %v", re.Extra)
	}
}
