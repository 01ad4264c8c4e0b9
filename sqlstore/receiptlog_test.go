package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore"
)

func newLog(tb testing.TB) (*sqlstore.Store, *sqlstore.ReceiptLog, ledger.Keys) {
	store := testenv.Store(tb)
	store.MaxParams = 32766
	_, keys := testenv.Signer(tb)
	return store, testenv.Receipts(tb, store), keys
}

var n atomic.Int64

func receipt() rowcall.Receipt {
	id := n.Add(1)
	return rowcall.Receipt{ID: fmt.Sprintf("inv_%010d", id), Trace: "t_bench", Actor: "owner", Key: "K", Type: rowcall.TypeFn,
		Runner: "fn", StartedAt: "2026-11-30T00:00:00.000Z", Millis: 0.05, OK: true, Material: true, Outcome: "ok",
		Input: "a", Output: "b", Contract: "c"}
}

// Concurrent appends group into few statements, and the chain they make
// verifies, with every field round-tripping through the JSON insert.
func TestReceiptLogGroupsAndChains(t *testing.T) {
	store, log, keys := newLog(t)
	_ = store
	const total = 500
	done := make(chan error, total)
	for range total {
		go func() { done <- <-log.Append(receipt()) }()
	}
	for range total {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	rc := receipt()
	rc.Parent, rc.TokenID, rc.Status, rc.CostUSD, rc.Shape = "inv_parent", "tok_x", 401, 0.0125, true
	if err := <-log.Append(rc); err != nil {
		t.Fatal(err)
	}
	chain, err := store.Receipts(context.Background(), 0, 10000)
	if err != nil || len(chain) != total+1 {
		t.Fatalf("%d receipts (%v)", len(chain), err)
	}
	if err := testenv.Verify(keys, chain); err != nil {
		t.Fatal(err)
	}
	last := chain[len(chain)-1]
	if last.Parent != "inv_parent" || last.TokenID != "tok_x" || last.Status != 401 || last.CostUSD != 0.0125 || !last.Shape || last.Millis != 0.05 {
		t.Fatalf("round trip: %+v", last)
	}
	if err := keys.Check(&last); err != nil {
		t.Fatalf("stored receipt does not verify: %v", err)
	}
}

// AppendIf stores a receipt only while the event log has not moved past its
// snapshot; a stale one is refused with rowcall.ErrStale and leaves no gap in the
// chain, also when it is queued between others (each group signed apart).
// The D1 limit (100 parameters, so a few receipts per statement) is run too.
func TestReceiptLogAppendIf(t *testing.T) {
	for _, maxParams := range []int{32766, 100} {
		t.Run(fmt.Sprint(maxParams), func(t *testing.T) {
			store, log, keys := newLog(t)
			store.MaxParams = maxParams
			ctx := context.Background()
			before, _ := store.LastEvent(ctx)
			if err := <-log.AppendIf(receipt(), before); err != nil {
				t.Fatalf("current snapshot: %v", err)
			}
			row := rowcall.NewRow("K", rowcall.TypeFn)
			row.Content = "# WHAT: k"
			if _, err := store.Create(ctx, row); err != nil { // writes an event
				t.Fatal(err)
			}
			after, _ := store.LastEvent(ctx)
			if after == before {
				t.Fatal("creating a row did not move the event log")
			}
			// Queued at once, so the writer takes them as one batch: stale ones
			// between current and unconditional ones.
			var waits []<-chan error
			var want []error
			for i := range 30 {
				switch i % 3 {
				case 0:
					waits, want = append(waits, log.AppendIf(receipt(), before)), append(want, rowcall.ErrStale)
				case 1:
					waits, want = append(waits, log.Append(receipt())), append(want, nil)
				default:
					waits, want = append(waits, log.AppendIf(receipt(), after)), append(want, nil)
				}
			}
			for i, w := range waits {
				if err := <-w; err != want[i] {
					t.Fatalf("receipt %d: %v, want %v", i, err, want[i])
				}
			}
			chain, err := store.Receipts(ctx, 0, 1000)
			if err != nil || len(chain) != 21 {
				t.Fatalf("%d receipts stored (%v), want 21", len(chain), err)
			}
			if err := testenv.Verify(keys, chain); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func BenchmarkReceiptLogSerial(b *testing.B) {
	_, log, _ := newLog(b)
	for b.Loop() {
		if err := <-log.Append(receipt()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReceiptLogParallel: 64 callers (32 per core), each waiting for its
// receipt as a dispatch does; receipts/group is how many one commit and one
// signature covered, on average.
func BenchmarkReceiptLogParallel(b *testing.B) {
	store, log, _ := newLog(b)
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := <-log.Append(receipt()); err != nil {
				b.Fatal(err)
			}
		}
	})
	var perGroup float64
	if err := store.DB.QueryRow(`SELECT COUNT(*) * 1.0 / COUNT(DISTINCT sig) FROM receipts`).Scan(&perGroup); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(perGroup, "receipts/group")
}

func BenchmarkLastEvent(b *testing.B) {
	store, _, _ := newLog(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := store.LastEvent(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	store, _, _ := newLog(b)
	ctx := context.Background()
	r := rowcall.NewRow("K", rowcall.TypeFn)
	r.Content = "# WHAT: k"
	store.Create(ctx, r)
	for b.Loop() {
		if _, err := store.Lookup(ctx, "K"); err != nil {
			b.Fatal(err)
		}
	}
}

// A receipt INSERT whose answer is lost (the statement committed, then the
// connection failed) or that fails before it runs is tried again on a fresh
// connection: every Append is acknowledged, and every receipt is stored once,
// in one chain that verifies.
func TestReceiptLogSurvivesLostConnections(t *testing.T) {
	for _, after := range []bool{true, false} {
		t.Run(fmt.Sprintf("committed=%v", after), func(t *testing.T) {
			dsn := "file:" + filepath.Join(t.TempDir(), "r.db") + "?_pragma=busy_timeout(10000)"
			plain, err := sql.Open("sqlite", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			if _, err := migrations.Apply(context.Background(), plain); err != nil {
				t.Fatal(err)
			}
			faults := &faulty{drv: plain.Driver(), dsn: dsn}
			db := sql.OpenDB(faults)
			defer db.Close()
			signer, _ := ledger.NewSigner(make([]byte, 32))
			keys, _ := ledger.ParseKeys([]ledger.PublicKey{signer.Public()})
			store := sqlstore.New(db)
			log := sqlstore.NewReceiptLog(store, signer)
			defer log.Close()
			var ids []string
			for i := range 6 {
				if i%2 == 1 {
					faults.failNext(after)
				}
				rc := receipt()
				ids = append(ids, rc.ID)
				if err := <-log.Append(rc); err != nil {
					t.Fatalf("append %d: %v", i, err)
				}
			}
			if faults.fired.Load() != 3 {
				t.Fatalf("%d faults fired, want 3", faults.fired.Load())
			}
			chain, err := store.Receipts(context.Background(), 0, 100)
			if err != nil || len(chain) != len(ids) {
				t.Fatalf("%d receipts stored for %d appends (%v)", len(chain), len(ids), err)
			}
			for i, rc := range chain {
				if rc.ID != ids[i] {
					t.Fatalf("receipt %d is %s, want %s", i, rc.ID, ids[i])
				}
			}
			if err := testenv.Verify(keys, chain); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A receipt whose id another stored receipt already has (a collision of the
// ids' random part) is not stored and its caller is told so: the writer does
// not take the other receipt for its own lost answer. The receipts queued
// beside it are stored, and the chain verifies.
func TestReceiptLogIDCollision(t *testing.T) {
	store, log, keys := newLog(t)
	first := receipt()
	if err := <-log.Append(first); err != nil {
		t.Fatal(err)
	}
	again := receipt()
	again.ID, again.Trace = first.ID, "t_other"
	if err := <-log.Append(again); err == nil || !strings.Contains(err.Error(), "already another receipt's") {
		t.Fatalf("a colliding id alone: %v, want it refused", err)
	}
	// In one group (queued together) with receipts that are fine.
	before, mid, after := receipt(), receipt(), receipt()
	mid.ID, mid.Trace = first.ID, "t_third"
	waits := []<-chan error{log.Append(before), log.Append(mid), log.Append(after)}
	for i, w := range waits {
		err := <-w
		if (i == 1) != (err != nil) {
			t.Fatalf("receipt %d of the group: %v", i, err)
		}
	}
	chain, err := store.Receipts(context.Background(), 0, 100)
	if err != nil || len(chain) != 3 {
		t.Fatalf("%d receipts stored (%v), want 3", len(chain), err)
	}
	for _, rc := range chain {
		if rc.ID == first.ID && rc.Trace != first.Trace {
			t.Fatalf("the colliding receipt replaced the stored one: %+v", rc)
		}
	}
	if err := testenv.Verify(keys, chain); err != nil {
		t.Fatal(err)
	}
}

// Receipts stored in one group keep each their own values where neighbours
// differ and share them where they agree (the writer converts a value a
// receipt shares with the one before it once, and a group of one row's calls
// binds the values they share once): every field reads back as it was
// queued, and the chain verifies — for receipts that differ from their
// neighbours, and for receipts that agree on every shared column (each a
// token's or an owner's call, with a parent or none, a status or none).
func TestReceiptLogGroupKeepsEachValue(t *testing.T) {
	t.Run("mixed", func(t *testing.T) {
		groupKeepsEachValue(t, func(rc *rowcall.Receipt, i int) {
			rc.Actor = []string{"owner", "token:tok_a"}[i%2]
			rc.Key = []string{"A", "B", "C"}[i%3]
			rc.Type, rc.Runner = []rowcall.Type{rowcall.TypeFn, rowcall.TypeHTTP}[i/2%2], []string{"fn", "http"}[i/2%2]
			rc.Contract = []string{rc.Contract, strings.Repeat("ab", 32), "not hex"}[i/3%3]
			rc.TokenID = []string{"", "tok_a", "tok_b"}[i/5%3]
		})
	})
	for _, token := range []string{"", "tok_a"} {
		t.Run("one row "+token, func(t *testing.T) {
			groupKeepsEachValue(t, func(rc *rowcall.Receipt, i int) {
				rc.TokenID, rc.Parent, rc.Status = token, []string{"", "inv_parent"}[i%2], []int{0, 200, 503}[i%3]
				rc.OK, rc.Material, rc.Shape, rc.CostUSD, rc.Millis = i%2 == 0, i%3 != 0, i%5 == 0, float64(i)/1000, float64(i)/7
				rc.Outcome = []string{"ok", "ERR:fn:exit:1"}[i%2]
			})
		})
	}
}

func groupKeepsEachValue(t *testing.T, vary func(rc *rowcall.Receipt, i int)) {
	store, log, keys := newLog(t)
	const total = 300
	queued := make(map[string]rowcall.Receipt, total)
	rcs := make([]rowcall.Receipt, total)
	for i := range rcs {
		rc := realistic(1, i)
		vary(&rc, i)
		rcs[i], queued[rc.ID] = rc, rc
	}
	done := make(chan error, total)
	for _, rc := range rcs {
		go func() { done <- <-log.Append(rc) }()
	}
	for range total {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	chain, err := store.Receipts(context.Background(), 0, 10000)
	if err != nil || len(chain) != total {
		t.Fatalf("%d receipts (%v)", len(chain), err)
	}
	if err := testenv.Verify(keys, chain); err != nil {
		t.Fatal(err)
	}
	for _, got := range chain {
		want := queued[got.ID]
		// What the writer sets (the chain's fields) is checked by Verify.
		want.Seq, want.Prev, want.SHA256, want.Sig, want.KeyID, want.Batch = got.Seq, got.Prev, got.SHA256, got.Sig, got.KeyID, got.Batch
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("stored %+v\nqueued %+v", got, want)
		}
	}
}
