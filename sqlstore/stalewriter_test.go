package sqlstore_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/libsql"
)

// Two hosts share one database, as hosts on one sqld or worker isolates on
// one D1 do. Host A writes a receipt and goes idle while host B writes on,
// seals and prunes: A's writer still knows its own receipt as the chain's
// end, and the seq after it is free in the table (pruned), so the unique seq
// cannot refuse A's next receipts there. They must link to the chain's real
// end all the same — in a group of several statements (D1's bound-parameter
// limit) and conditionally (AppendIf: stored while its event still holds,
// rowcall.ErrStale once it does not) — and be exported, verified, and kept by
// the next Prune.
func TestStaleWriterAfterPrune(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) *sqlstore.Store{
		"sqlite": func(t *testing.T) *sqlstore.Store { return testenv.Store(t) },
		"sqld":   sqldStore,
	} {
		for _, maxParams := range []int{32766, 100} {
			t.Run(fmt.Sprint(name, "/", maxParams), func(t *testing.T) {
				store := open(t)
				store.MaxParams = maxParams
				staleWriterAfterPrune(t, store)
			})
		}
	}
}

func staleWriterAfterPrune(t *testing.T, store *sqlstore.Store) {
	ctx := context.Background()
	hostA, hostB := testenv.Receipts(t, store), testenv.Receipts(t, store)
	signer, keys := testenv.Signer(t)
	store.Now = func() time.Time { return time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC) } // receipt() starts them at 00:00
	store.Archive = &sqlstore.Archive{Store: store, Objects: sqlstore.DirObjects{Dir: t.TempDir()}, Signer: signer,
		Origin: "rowcall.test/receipts", Size: 10, Retain: 30 * time.Minute}
	var acked []rowcall.Receipt
	// write queues n receipts on log at once (one group) and waits for each.
	write := func(log *sqlstore.ReceiptLog, n int) []rowcall.Receipt {
		t.Helper()
		rcs, waits := make([]rowcall.Receipt, n), make([]<-chan error, n)
		for i := range rcs {
			rcs[i] = receipt()
			waits[i] = log.Append(rcs[i])
		}
		for i, w := range waits {
			if err := <-w; err != nil {
				t.Fatalf("receipt %d of %d: %v", i, n, err)
			}
		}
		acked = append(acked, rcs...)
		return rcs
	}
	// sealAndPrune seals what B wrote and prunes every sealed receipt but the chain's newest.
	sealAndPrune := func(segments int, pruned int64) {
		t.Helper()
		if n, err := store.Archive.Seal(ctx); err != nil || n != segments {
			t.Fatalf("sealed %d segments, want %d: %v", n, segments, err)
		}
		if n, err := store.Archive.Prune(ctx); err != nil || n != pruned {
			t.Fatalf("pruned %d, want %d: %v", n, pruned, err)
		}
	}
	// stored checks that rcs are stored at seq first on, the first linked
	// to the receipt before it.
	stored := func(rcs []rowcall.Receipt, first int64) {
		t.Helper()
		prev, err := store.Receipts(ctx, first-2, 1)
		if err != nil || len(prev) != 1 || prev[0].Seq != first-1 {
			t.Fatalf("seq %d: %v %v", first-1, prev, err)
		}
		for i, rc := range rcs {
			got, err := store.Receipt(ctx, rc.ID)
			if err != nil || got.Seq != first+int64(i) {
				t.Fatalf("host A's receipt %d is stored at seq %d, want %d after the chain's end (%v)", i, got.Seq, first+int64(i), err)
			}
			if i == 0 && got.Prev != prev[0].SHA256 {
				t.Fatalf("host A's receipt at seq %d links to %s, not to seq %d (%s)", got.Seq, got.Prev, first-1, prev[0].SHA256)
			}
		}
	}

	write(hostA, 1)  // seq 1: A's end from now on
	write(hostB, 20) // seq 2 to 21
	sealAndPrune(2, 20)
	stored(write(hostA, 5), 22) // A's writer links to seq 1; seq 2 is free

	write(hostB, 14) // seq 27 to 40
	sealAndPrune(2, 19)
	row := rowcall.NewRow("K", rowcall.TypeFn)
	row.Content = "# WHAT: k"
	before, _ := store.LastEvent(ctx)
	if _, err := store.Create(ctx, row); err != nil { // moves the event log
		t.Fatal(err)
	}
	if err := <-hostA.AppendIf(receipt(), before); err != rowcall.ErrStale {
		t.Fatalf("a receipt whose event no longer holds, from a writer behind the chain's end: %v, want rowcall.ErrStale", err)
	}
	after, _ := store.LastEvent(ctx)
	rc := receipt()
	if err := <-hostA.AppendIf(rc, after); err != nil {
		t.Fatal(err)
	}
	acked = append(acked, rc)
	stored([]rowcall.Receipt{rc}, 41)

	if c := exported(t, store, keys, 7); c.Count() != 41 {
		t.Fatalf("the export holds %d receipts, want 41", c.Count())
	}
	if n, err := store.Archive.Verify(ctx, keys); err != nil || n != 41 {
		t.Fatalf("Verify checked %d receipts, want 41: %v", n, err)
	}
	if _, err := store.Archive.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	for _, rc := range acked {
		if _, err := store.Receipt(ctx, rc.ID); err != nil {
			t.Fatalf("acknowledged receipt %s after Prune: %v", rc.ID, err)
		}
	}
}

// A table whose newest receipts were deleted ends below its last sealed
// segment: a writer finds no end to link to and refuses, with the cause,
// rather than start the chain again inside the sealed run.
func TestWriterRefusesEndBelowSealed(t *testing.T) {
	ctx := context.Background()
	store, log, _ := newLog(t)
	for range 20 {
		if err := <-log.Append(receipt()); err != nil {
			t.Fatal(err)
		}
	}
	signer, _ := testenv.Signer(t)
	store.Archive = &sqlstore.Archive{Store: store, Objects: sqlstore.DirObjects{Dir: t.TempDir()}, Signer: signer,
		Origin: "rowcall.test/receipts", Size: 10}
	if n, err := store.Archive.Seal(ctx); err != nil || n != 2 {
		t.Fatalf("sealed %d: %v", n, err)
	}
	if _, err := store.DB.Exec(`DELETE FROM receipts`); err != nil {
		t.Fatal(err)
	}
	err := <-testenv.Receipts(t, store).Append(receipt())
	if rowcall.ErrorCode(err) != rowcall.EInternal || !strings.Contains(err.Error(), "ends at seq 0, below its last sealed segment (seq 20)") {
		t.Fatalf("a receipt on a table that ends below its sealed segments: %v", err)
	}
	if head, _, err := store.ChainHead(ctx); err != nil || head != 0 {
		t.Fatalf("the table's end is seq %d (%v): the receipt was stored inside the sealed run", head, err)
	}
}

// sqldStore is a store on a fresh database of a libSQL server (sqld),
// migrated.
func sqldStore(t *testing.T) *sqlstore.Store {
	db, err := libsql.Open(context.Background(), sqldURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := migrations.Apply(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return sqlstore.New(db)
}

// sqldURL runs a libSQL server (sqld) on a fresh database until the test
// ends and returns its URL.
func sqldURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	testdb.Sqld(t, addr, filepath.Join(t.TempDir(), "db"))
	return "http://" + addr
}
