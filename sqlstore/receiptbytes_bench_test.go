package sqlstore_test

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkReceiptBytes is what a hot receipt costs the database: N receipts
// (ROWCALL_BENCH_RECEIPTS, default 20,000) appended through the receipt
// writer, from one caller at a time (each receipt its own signed batch, as a
// quiet host or the worker writes them) and from 64 at once (batches of up to
// MaxBatch, each receipt carrying its Merkle path). It reports the receipts
// table's and each of its indexes' payload per receipt (dbstat: the cells'
// bytes, no page slack) and the whole file's used pages per receipt.
//
//	go test ./sqlstore -run '^$' -bench ReceiptBytes -benchtime 1x
func BenchmarkReceiptBytes(b *testing.B) {
	total := envInt("ROWCALL_BENCH_RECEIPTS", 20000)
	for _, callers := range []int{1, 64} {
		name := "1caller"
		if callers > 1 {
			name = "64callers"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				store, log, _ := newLog(b)
				if callers == 1 {
					for i := range total {
						if err := <-log.Append(realistic(0, i)); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					appendMany(b, log, total)
				}
				log.Close()
				rows, err := store.DB.Query(`SELECT d.name, SUM(d.payload) FROM dbstat d JOIN sqlite_master m ON m.name = d.name WHERE m.tbl_name = 'receipts' GROUP BY d.name ORDER BY d.name`)
				if err != nil {
					b.Fatal(err)
				}
				var all int64
				var parts []string
				for rows.Next() {
					var n string
					var payload int64
					if err := rows.Scan(&n, &payload); err != nil {
						b.Fatal(err)
					}
					all += payload
					parts = append(parts, n+" "+strings.TrimSpace(fmtPer(payload, total)))
				}
				if err := rows.Err(); err != nil {
					b.Fatal(err)
				}
				rows.Close()
				b.ReportMetric(float64(all)/float64(total), "payload-B/receipt")
				b.ReportMetric(float64(dbBytes(b, store))/float64(total), "db-B/receipt")
				b.Logf("%d receipts, %s: payload per receipt %s (%s); the file's used pages %s", total, name,
					fmtPer(all, total), strings.Join(parts, ", "), fmtPer(dbBytes(b, store), total))
			}
		})
	}
}

func fmtPer(n int64, total int) string {
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(float64(n)/float64(total), 'f', 1, 64), "0"), ".") + " B"
}
