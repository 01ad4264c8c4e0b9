package sqlstore_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore"
)

// archived writes total receipts with a segment size of size, seals them
// into objects and prunes them (retention 30 minutes, the receipts an hour
// old), and returns the store (its Archive set), the keys and the chain as
// written.
func archived(t *testing.T, objects sqlstore.ObjectStore, total, size int) (*sqlstore.Store, ledger.Keys, []rowcall.Receipt) {
	t.Helper()
	ctx := context.Background()
	store, log, keys := newLog(t)
	for range total {
		if err := <-log.Append(receipt()); err != nil {
			t.Fatal(err)
		}
	}
	chain, err := store.Receipts(ctx, 0, total)
	if err != nil || len(chain) != total {
		t.Fatalf("%d receipts, %v", len(chain), err)
	}
	signer, _ := testenv.Signer(t)
	store.Now = func() time.Time { return time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC) } // the receipts started at 00:00
	store.Archive = &sqlstore.Archive{Store: store, Objects: objects, Signer: signer,
		Origin: "rowcall.test/receipts", Size: size, Retain: 2 * time.Hour}
	sealed, err := store.Archive.Seal(ctx)
	if err != nil || sealed != total/size {
		t.Fatalf("sealed %d segments, want %d: %v", sealed, total/size, err)
	}
	if n, err := store.Archive.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("pruned %d inside the retention window: %v", n, err)
	}
	store.Archive.Retain = 30 * time.Minute
	want := int64(min(total/size*size, total-1)) // the chain's newest stays: the writer links to it
	if n, err := store.Archive.Prune(ctx); err != nil || n != want {
		t.Fatalf("pruned %d, want every sealed receipt but the newest (%d): %v", n, want, err)
	}
	return store, keys, chain
}

// eachBackend runs test against a fresh store of each ObjectStore backend.
func eachBackend(t *testing.T, test func(t *testing.T, objects sqlstore.ObjectStore)) {
	for name, open := range objectBackends() {
		t.Run(name, func(t *testing.T) { test(t, open(t)) })
	}
}

// A chain sealed into segments and pruned to its hot window still reads as
// one: an archived receipt is found by id and verifies, the whole chain pages
// out in order and verifies, and the table holds only what was not sealed.
func TestReceiptSegmentsReadAcross(t *testing.T) { eachBackend(t, testReadAcross) }

func testReadAcross(t *testing.T, objects sqlstore.ObjectStore) {
	ctx := context.Background()
	store, keys, chain := archived(t, objects, 95, 10)
	var hot int
	if err := store.DB.QueryRow(`SELECT COUNT(*) FROM receipts`).Scan(&hot); err != nil || hot != 5 {
		t.Fatalf("the table holds %d receipts after pruning, want the 5 unsealed: %v", hot, err)
	}
	for _, want := range []rowcall.Receipt{chain[2], chain[47], chain[89], chain[94]} {
		got, err := store.Receipt(ctx, want.ID)
		if err != nil {
			t.Fatalf("receipt %s (seq %d): %v", want.ID, want.Seq, err)
		}
		if got.SHA256 != want.SHA256 || got.Seq != want.Seq {
			t.Fatalf("receipt %s: got seq %d %s, want seq %d %s", want.ID, got.Seq, got.SHA256, want.Seq, want.SHA256)
		}
		if err := keys.Check(&got); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Receipt(ctx, "inv_nosuch"); rowcall.ErrorCode(err) != rowcall.ENotFound {
		t.Fatalf("an unknown id: %v, want %s", err, rowcall.ENotFound)
	}
	// Page as the export does, with pages that straddle segment ends.
	c := exported(t, store, keys, 7)
	if c.Count() != 95 || c.Last() != chain[94].Seq {
		t.Fatalf("the export read %d receipts to seq %d, want 95 to %d", c.Count(), c.Last(), chain[94].Seq)
	}
	if n, err := store.Archive.Verify(ctx, keys); err != nil || n != 95 {
		t.Fatalf("Verify checked %d receipts: %v", n, err)
	}
	// More receipts seal on: the next segment links to the last.
	if _, err := store.Archive.Seal(ctx); err != nil {
		t.Fatal(err)
	}
}

// A segment altered in object storage is refused wherever it is read, with
// an error naming it and saying what is wrong.
func TestReceiptSegmentTampered(t *testing.T) { eachBackend(t, testTampered) }

func testTampered(t *testing.T, objects sqlstore.ObjectStore) {
	ctx := context.Background()
	store, keys, chain := archived(t, objects, 40, 10)
	const key = "receipts/00000000000000000011-00000000000000000020.jsonl.gz"
	data, err := objects.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	text, _ := io.ReadAll(zr)
	altered := bytes.Replace(text, []byte(`"outcome":"ok"`), []byte(`"outcome":"ERR:x"`), 1)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(altered)
	zw.Close()
	if err := objects.Put(ctx, key, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	const want = "receipt segment receipts/00000000000000000011-00000000000000000020.jsonl.gz (seq 11 to 20): its sha256 "
	if _, err := store.Receipt(ctx, chain[14].ID); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "the segment was altered or replaced") {
		t.Fatalf("confirm of a receipt in the altered segment: %v", err)
	}
	if _, err := store.Receipts(ctx, 10, 100); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("export through the altered segment: %v", err)
	}
	if _, err := store.Archive.Verify(ctx, keys); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Verify of the archive: %v", err)
	}
	// The segments before it still read.
	if _, err := store.Receipt(ctx, chain[3].ID); err != nil {
		t.Fatal(err)
	}
}

// A segment missing from object storage (the archive pointed at an empty
// bucket or directory) is refused as receipt_unavailable, with an error
// naming it and not where the storage keeps it (a path, a bucket's address).
func TestReceiptSegmentMissing(t *testing.T) {
	for name, open := range objectBackends() {
		t.Run(name, func(t *testing.T) {
			store, _, chain := archived(t, open(t), 30, 10)
			store.Archive.Objects = open(t)
			_, err := store.Receipt(context.Background(), chain[25].ID)
			if rowcall.ErrorCode(err) != rowcall.EReceiptUnavailable ||
				!strings.HasSuffix(err.Error(), ": receipt segment receipts/00000000000000000021-00000000000000000030.jsonl.gz (seq 21 to 30): is missing from object storage") {
				t.Fatalf("confirm of a receipt whose segment is gone: %v", err)
			}
		})
	}
}

// A segment's record edited in the database no longer matches the checkpoint
// signed when it was sealed: the archive's Verify says so.
func TestReceiptSegmentRecordAltered(t *testing.T) {
	ctx := context.Background()
	store, keys, _ := archived(t, sqlstore.DirObjects{Dir: t.TempDir()}, 30, 10)
	if _, err := store.DB.Exec(`UPDATE receipt_segments SET head = ? WHERE first_seq = 11`, strings.Repeat("0", 64)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Archive.Verify(ctx, keys); err == nil || !strings.Contains(err.Error(), "receipt segment receipts/00000000000000000011-00000000000000000020.jsonl.gz: its record in the database is not what its signed checkpoint names") {
		t.Fatalf("Verify of an altered record: %v", err)
	}
}

// exported reads store's chain the way an export pages it, page receipts at
// a time, into a chain of keys (which checks each receipt as it is added).
func exported(tb testing.TB, store *sqlstore.Store, keys ledger.Keys, page int) *ledger.Chain {
	tb.Helper()
	c := keys.NewChain()
	for after := int64(0); ; {
		got, err := store.Receipts(context.Background(), after, page)
		if err != nil {
			tb.Fatal(err)
		}
		for i := range got {
			if err := c.Add(&got[i]); err != nil {
				tb.Fatal(err)
			}
		}
		if len(got) < page {
			return c
		}
		after = got[len(got)-1].Seq
	}
}
