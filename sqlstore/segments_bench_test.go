package sqlstore_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore"
)

// BenchmarkReceiptArchive writes ROWCALL_BENCH_RECEIPTS receipts (default
// 100,000) straight into the store through the receipt writer, seals them in
// segments of ROWCALL_BENCH_SEGMENT (default 10,000) to object storage
// (ROWCALL_BENCH_OBJECTS: dir, the default, s3 or s3disk, as objectBackends opens
// them), prunes the table to its newest receipt, then confirms an archived receipt and
// verifies the whole chain (Archive.Verify: one segment at a time) and pages
// it out as the export does. It reports bytes per receipt in the database
// before and after, the segments' bytes, and the peak live heap of verify and
// export (sampled). Run it once:
//
//	ROWCALL_BENCH_RECEIPTS=1000000 go test ./sqlstore -run '^$' -bench ReceiptArchive -benchtime 1x -timeout 60m
func BenchmarkReceiptArchive(b *testing.B) {
	total := envInt("ROWCALL_BENCH_RECEIPTS", 100000)
	size := envInt("ROWCALL_BENCH_SEGMENT", 10000)
	open := objectBackends()[cmp.Or(os.Getenv("ROWCALL_BENCH_OBJECTS"), "dir")]
	if open == nil {
		b.Fatalf("ROWCALL_BENCH_OBJECTS=%s: want dir, s3 or s3disk", os.Getenv("ROWCALL_BENCH_OBJECTS"))
	}
	ctx := context.Background()
	for range b.N {
		store, log, keys := newLog(b)
		start := time.Now()
		appendMany(b, log, total)
		b.ReportMetric(float64(total)/time.Since(start).Seconds(), "appends/s")
		before := dbBytes(b, store)
		signer, _ := testenv.Signer(b)
		objects := open(b)
		store.Archive = &sqlstore.Archive{Store: store, Objects: objects, Signer: signer,
			Origin: "bench/receipts", Size: size}
		start = time.Now()
		if _, err := store.Archive.Seal(ctx); err != nil {
			b.Fatal(err)
		}
		seal := time.Since(start)
		start = time.Now()
		pruned, err := store.Archive.Prune(ctx)
		if err != nil {
			b.Fatal(err)
		}
		prune := time.Since(start)
		if _, err := store.DB.Exec(`VACUUM`); err != nil {
			b.Fatal(err)
		}
		after := dbBytes(b, store)
		var segBytes, segments, hot int64
		if err := store.DB.QueryRow(`SELECT SUM(bytes), COUNT(*), (SELECT COUNT(*) FROM receipts) FROM receipt_segments`).Scan(&segBytes, &segments, &hot); err != nil {
			b.Fatal(err)
		}
		// One archived receipt, found by id through the filters (a fresh
		// archive: nothing cached).
		store.Archive = &sqlstore.Archive{Store: store, Objects: objects, Signer: signer, Origin: "bench/receipts", Size: size}
		first, err := store.Receipts(ctx, int64(total/2), 1)
		if err != nil || len(first) != 1 {
			b.Fatal(err)
		}
		store.Archive = &sqlstore.Archive{Store: store, Objects: objects, Signer: signer, Origin: "bench/receipts", Size: size}
		start = time.Now()
		got, err := store.Receipt(ctx, first[0].ID)
		if err != nil || keys.Check(&got) != nil {
			b.Fatal(err)
		}
		confirm := time.Since(start)

		var verified int64
		start = time.Now()
		verifyPeak := peakHeap(func() {
			if verified, err = store.Archive.Verify(ctx, keys); err != nil || verified != int64(total) {
				b.Fatalf("verified %d: %v", verified, err)
			}
		})
		verify := time.Since(start)
		start = time.Now()
		exportPeak := peakHeap(func() {
			c := exported(b, store, keys, 1000)
			if c.Count() != int64(total) {
				b.Fatalf("exported %d", c.Count())
			}
		})
		export := time.Since(start)
		b.ReportMetric(float64(before)/float64(total), "db-B/receipt-before")
		b.ReportMetric(float64(after), "db-B-after")
		b.ReportMetric(float64(after)/float64(total), "db-B/receipt-after")
		b.ReportMetric(float64(segBytes)/float64(total), "segment-B/receipt")
		b.ReportMetric(float64(verifyPeak)/(1<<20), "verify-peak-heap-MB")
		b.ReportMetric(float64(exportPeak)/(1<<20), "export-peak-heap-MB")
		b.Logf("%d receipts, segments of %d: db %d B before (%.0f B/receipt), %d B after sealing and pruning %d (%.2f B/receipt, %d receipts left in the table); %d segments, %d B; seal %v, prune %v, confirm of an archived receipt %v, verify %v (peak heap %.1f MB), export+verify %v (peak heap %.1f MB)",
			total, size, before, float64(before)/float64(total), after, pruned, float64(after)/float64(total), hot, segments, segBytes, seal, prune, confirm, verify, float64(verifyPeak)/(1<<20), export, float64(exportPeak)/(1<<20))
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// appendMany appends total receipts with realistic ids and hashes from 64
// callers at once, as a loaded host does.
func appendMany(tb testing.TB, log *sqlstore.ReceiptLog, total int) {
	var wg sync.WaitGroup
	per := total / 64
	for w := range 64 {
		n := per
		if w == 63 {
			n = total - 63*per
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				if err := <-log.Append(realistic(w, i)); err != nil {
					tb.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func realistic(w, i int) rowcall.Receipt {
	b := make([]byte, 8)
	rand.Read(b)
	h := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	// The id: 10 hex digits as scattered as random ones, but unique (40 random
	// bits collide about once in 1,000,000 receipts, failing that group):
	// caller and number, times an odd constant mod 2^40.
	id := (uint64(w)<<24 | uint64(i)) * 0x9e3779b97f4a7c15 & (1<<40 - 1)
	return rowcall.Receipt{ID: fmt.Sprintf("inv_%010x", id), Trace: "t_" + hex.EncodeToString(b)[6:14], Actor: "owner:terminal-key",
		Key: "ZZ_TEST_TEMPERATURE", Type: rowcall.TypeHTTP, Runner: "http", StartedAt: time.Now().UTC().Format(rowcall.Timestamp),
		Millis: 1.25, OK: true, Material: true, Status: 200, Outcome: "ok", Input: h(fmt.Sprint(w, i)), Output: h(fmt.Sprint(i, w)), Contract: h("c")}
}

// dbBytes is the database's used pages in bytes.
func dbBytes(tb testing.TB, store *sqlstore.Store) int64 {
	var pages, free, size int64
	store.DB.QueryRow(`PRAGMA page_count`).Scan(&pages)
	store.DB.QueryRow(`PRAGMA freelist_count`).Scan(&free)
	store.DB.QueryRow(`PRAGMA page_size`).Scan(&size)
	return (pages - free) * size
}

// peakHeap runs f and returns the highest live heap seen.
func peakHeap(f func()) uint64 {
	runtime.GC()
	_, peak := testenv.HeapPeak(f)
	return peak
}

// BenchmarkArchivedConfirm is Store.Receipt of a receipt pruned from the
// table: its segment (10,000 receipts) found by the id filters, fetched from
// each object store backend, hash-checked and scanned for its line.
//
//	go test ./sqlstore -run '^$' -bench ArchivedConfirm -benchtime 20x
func BenchmarkArchivedConfirm(b *testing.B) {
	for name, open := range objectBackends() {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			store, log, keys := newLog(b)
			appendMany(b, log, 20001)
			signer, _ := testenv.Signer(b)
			store.Archive = &sqlstore.Archive{Store: store, Objects: open(b), Signer: signer, Origin: "bench/receipts", Size: 10000}
			one, err := store.Receipts(ctx, 4321, 1)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := store.Archive.Seal(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := store.Archive.Prune(ctx); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				got, err := store.Receipt(ctx, one[0].ID)
				if err != nil || keys.Check(&got) != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
