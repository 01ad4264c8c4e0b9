package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/libsql"
)

// Two writers share one chain (two hosts on one database), and one of them
// would lose the race for the chain's end every time: before each of its
// INSERTs runs, the other writer stores a receipt if it can. The loser loses
// once, takes the chain's turn, and its receipt is stored; the other's
// receipt waits for the turn and is stored after it, the turn is given back,
// and the chain verifies. (Without the turn, the loser's receipt failed after
// relinking for 10 s.)
func TestReceiptLogLoserTakesTurn(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) (*sql.DB, string){
		"sqlite": func(t *testing.T) (*sql.DB, string) {
			dsn := "file:" + filepath.Join(t.TempDir(), "r.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
			db, err := sql.Open("sqlite", dsn)
			if err != nil {
				t.Fatal(err)
			}
			return db, dsn
		},
		"sqld": func(t *testing.T) (*sql.DB, string) {
			url := sqldURL(t)
			db, err := libsql.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			return db, url
		},
	} {
		t.Run(name, func(t *testing.T) {
			db, dsn := open(t)
			t.Cleanup(func() { db.Close() })
			if _, err := migrations.Apply(context.Background(), db); err != nil {
				t.Fatal(err)
			}
			loserTakesTurn(t, db, dsn)
		})
	}
}

func loserTakesTurn(t *testing.T, db *sql.DB, dsn string) {
	ctx := context.Background()
	store := sqlstore.New(db)
	winner := testenv.Receipts(t, store)
	faults := &faulty{drv: db.Driver(), dsn: dsn}
	loserDB := sql.OpenDB(faults)
	t.Cleanup(func() { loserDB.Close() })
	loser := testenv.Receipts(t, sqlstore.New(loserDB))

	var (
		mu       sync.Mutex
		acked    []string
		pending  sync.WaitGroup
		first    atomic.Int32 // the winner's receipts stored before one of the loser's INSERTs
		gaveWay  atomic.Int32 // the winner's receipts that waited for the loser's turn
		failures atomic.Int32
	)
	faults.before = func() {
		rc := receipt()
		done := make(chan struct{})
		pending.Go(func() {
			defer close(done)
			if err := <-winner.Append(rc); err != nil {
				failures.Add(1)
				t.Errorf("the winner's receipt: %v", err)
				return
			}
			mu.Lock()
			acked = append(acked, rc.ID)
			mu.Unlock()
		})
		for {
			select {
			case <-done:
				first.Add(1)
				return
			case <-time.After(time.Millisecond):
			}
			var turns int
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM receipt_turn`).Scan(&turns); err == nil && turns > 0 {
				gaveWay.Add(1) // it waits for the loser's turn
				return
			}
		}
	}
	var mine []string
	for i := range 3 {
		rc := receipt()
		start := time.Now()
		if err := <-loser.Append(rc); err != nil {
			t.Fatalf("the loser's receipt %d: %v", i, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("the loser's receipt %d took %s", i, took)
		}
		mine = append(mine, rc.ID)
	}
	pending.Wait()
	if n := int32(len(mine)); first.Load() != n || gaveWay.Load() != n || failures.Load() > 0 {
		t.Fatalf("the winner stored %d receipts first and gave way %d times for the loser's %d, failed %d: the loser did not lose once and then hold the turn each time",
			first.Load(), gaveWay.Load(), len(mine), failures.Load())
	}

	var turns int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM receipt_turn`).Scan(&turns); err != nil || turns != 0 {
		t.Fatalf("%d turns left held (%v), want none", turns, err)
	}
	chain, err := store.Receipts(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	_, keys := testenv.Signer(t)
	if err := testenv.Verify(keys, chain); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, rc := range chain {
		seen[rc.ID]++
	}
	for _, id := range append(mine, acked...) {
		if seen[id] != 1 {
			t.Fatalf("acknowledged receipt %s is stored %d times", id, seen[id])
		}
	}
	if len(chain) != len(mine)+len(acked) {
		t.Fatalf("%d receipts in the chain, want %d", len(chain), len(mine)+len(acked))
	}
	t.Logf("the loser's %d receipts stored after the winner's %d took the end first; %d of the winner's waited for its turn; %d receipts in one chain",
		len(mine), first.Load(), gaveWay.Load(), len(chain))
}
