package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/s3objects"
)

// objectBackends opens a fresh, empty store of each ObjectStore the host
// has: a directory, and an S3 bucket on a real S3 server (gofakes3 on
// loopback; "s3" keeps its objects in memory, "s3disk" in files) reached
// through s3objects with SigV4 — the worker's
// R2 runs the same calls in workerd (test/segments_test.go). Every test that
// takes a backend runs against each one.
func objectBackends() map[string]func(tb testing.TB) sqlstore.ObjectStore {
	return map[string]func(tb testing.TB) sqlstore.ObjectStore{
		"dir": func(tb testing.TB) sqlstore.ObjectStore { return sqlstore.DirObjects{Dir: tb.TempDir()} },
		"s3": func(tb testing.TB) sqlstore.ObjectStore {
			return newS3(tb, testenv.S3(tb, "rowcall"), "rowcall", "archive/receipts")
		},
		"s3disk": func(tb testing.TB) sqlstore.ObjectStore {
			return newS3(tb, testenv.S3OnDisk(tb, "rowcall"), "rowcall", "archive/receipts")
		},
	}
}

func newS3(t testing.TB, srv *httptest.Server, bucket, prefix string) *s3objects.Store {
	t.Helper()
	store, err := s3objects.Open("s3://"+bucket+"/"+prefix+"?endpoint="+srv.URL+"&region=us-east-1", testenv.S3AccessKeyID, testenv.S3Secret)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// Every ObjectStore keeps what is put under its key, with slashes, replaces
// it whole on a second Put, and answers ErrObjectNotFound for a key never
// put.
func TestObjectStores(t *testing.T) {
	ctx := context.Background()
	for name, open := range objectBackends() {
		t.Run(name, func(t *testing.T) {
			store := open(t)
			if _, err := store.Get(ctx, "receipts/nosuch.jsonl.gz"); !errors.Is(err, sqlstore.ErrObjectNotFound) {
				t.Fatalf("Get of a key never put: %v, want ErrObjectNotFound", err)
			}
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
			for key, data := range map[string][]byte{"receipts/a.jsonl.gz": []byte("first"), "receipts/b/c.jsonl.gz": big} {
				if err := store.Put(ctx, key, data); err != nil {
					t.Fatalf("Put %s: %v", key, err)
				}
				got, err := store.Get(ctx, key)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("Get %s: %d bytes, %v; want the %d put", key, len(got), err, len(data))
				}
			}
			if err := store.Put(ctx, "receipts/a.jsonl.gz", []byte("second, longer")); err != nil {
				t.Fatal(err)
			}
			if got, err := store.Get(ctx, "receipts/a.jsonl.gz"); err != nil || string(got) != "second, longer" {
				t.Fatalf("Get after a second Put: %q, %v", got, err)
			}
		})
	}
}

// An S3 archive without credentials, or with a malformed address, is refused
// before anything is sent.
func TestS3ObjectsOpen(t *testing.T) {
	for _, c := range []struct{ url, id, want string }{
		{"s3://rowcall/receipts", "", "no access key id or secret access key"},
		{"s3:///receipts", "k", "want s3://BUCKET/PREFIX"},
		{"s3://rowcall?endpoint=ftp://x", "k", "is not an http:// or https:// origin"},
		{"s3://rowcall?endpont=http://x", "k", `unknown parameter "endpont"`},
	} {
		if _, err := s3objects.Open(c.url, c.id, "secret"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q): %v, want %q", c.url, err, c.want)
		}
	}
}
