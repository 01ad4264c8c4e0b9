package sqlstore_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore"
)

// archived writes total receipts with a segment size of size, seals and
// prunes them (retention 30 minutes, the receipts an hour old), and returns
// the store (its Archive set), the keys and the chain as written.
func archived(t *testing.T, total, size int) (*sqlstore.Store, ledger.Keys, []rowcall.Receipt, string) {
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
	dir := t.TempDir()
	store.Now = func() time.Time { return time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC) } // the receipts started at 00:00
	store.Archive = &sqlstore.Archive{Store: store, Objects: sqlstore.DirObjects{Dir: dir}, Signer: signer,
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
	return store, keys, chain, dir
}

// A chain sealed into segments and pruned to its hot window still reads as
// one: an archived receipt is found by id and verifies, the whole chain pages
// out in order and verifies, and the table holds only what was not sealed.
func TestReceiptSegmentsReadAcross(t *testing.T) {
	ctx := context.Background()
	store, keys, chain, _ := archived(t, 95, 10)
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
	c := keys.NewChain()
	for after := int64(0); ; {
		page, err := store.Receipts(ctx, after, 7)
		if err != nil {
			t.Fatal(err)
		}
		for i := range page {
			if err := c.Add(&page[i]); err != nil {
				t.Fatal(err)
			}
		}
		if len(page) < 7 {
			break
		}
		after = page[len(page)-1].Seq
	}
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
func TestReceiptSegmentTampered(t *testing.T) {
	ctx := context.Background()
	store, keys, chain, dir := archived(t, 40, 10)
	files, _ := filepath.Glob(filepath.Join(dir, "receipts", "*-00000000000000000020.jsonl.gz"))
	if len(files) != 1 {
		t.Fatalf("segment files: %v", files)
	}
	data, err := os.ReadFile(files[0])
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
	if err := os.WriteFile(files[0], buf.Bytes(), 0o644); err != nil {
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

// A segment's record edited in the database no longer matches the checkpoint
// signed when it was sealed: the archive's Verify says so.
func TestReceiptSegmentRecordAltered(t *testing.T) {
	ctx := context.Background()
	store, keys, _, _ := archived(t, 30, 10)
	if _, err := store.DB.Exec(`UPDATE receipt_segments SET head = ? WHERE first_seq = 11`, strings.Repeat("0", 64)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Archive.Verify(ctx, keys); err == nil || !strings.Contains(err.Error(), "receipt segment receipts/00000000000000000011-00000000000000000020.jsonl.gz: its record in the database is not what its signed checkpoint names") {
		t.Fatalf("Verify of an altered record: %v", err)
	}
}
