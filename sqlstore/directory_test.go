package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	return New(testdb.Open(t))
}

// row_num and total as List and Get give them without the window over the
// whole directory agree with the window's; pinned rows (seq) come first, ties
// of seq by key.
func TestRowNumWithoutTheWindow(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	var rows []rowcall.Row
	for i := range 40 {
		r := rowcall.NewRow(fmt.Sprintf("K%02d", (i*17)%40), rowcall.TypeHTTP)
		r.Target, r.Content = "GET http://127.0.0.1:1/", "# WHAT: row"
		if i%5 == 0 {
			seq := int64(i % 3) // duplicated seq values
			r.Seq = &seq
		}
		if i%4 == 0 {
			r.Type = rowcall.TypeFlow
		}
		rows = append(rows, r)
	}
	if err := s.Upsert(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "K07", 0, ""); err != nil { // the counter follows deletes
		t.Fatal(err)
	}
	// The window's numbering, as List numbered every page before.
	want := map[string]int64{}
	wr, err := s.DB.QueryContext(ctx, `SELECT key, ROW_NUMBER() OVER (ORDER BY `+canonicalOrder+`) FROM directory`)
	if err != nil {
		t.Fatal(err)
	}
	for wr.Next() {
		var k string
		var n int64
		wr.Scan(&k, &n)
		want[k] = n
	}
	wr.Close()
	if len(want) != 39 {
		t.Fatalf("%d rows", len(want))
	}
	seen := 0
	for off := 0; off < 45; off += 7 {
		p, err := s.List(ctx, rowcall.Filter{Limit: 7, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 39 {
			t.Fatalf("offset %d: total %d", off, p.Total)
		}
		for _, r := range p.Rows {
			seen++
			if r.RowNum != want[r.Key] || r.RowNum != int64(seen) {
				t.Fatalf("offset %d: %s has row_num %d, the window says %d", off, r.Key, r.RowNum, want[r.Key])
			}
			g, err := s.Get(ctx, r.Key)
			if err != nil || g.RowNum != want[r.Key] {
				t.Fatalf("Get(%s): row_num %d %v, want %d", r.Key, g.RowNum, err, want[r.Key])
			}
		}
	}
	if seen != 39 {
		t.Fatalf("the pages held %d rows", seen)
	}
	// A filtered page numbers in the whole directory; a bare one does not number.
	flow := rowcall.Filter{Type: rowcall.TypeFlow, Limit: 100}
	p, _ := s.List(ctx, flow)
	flow.Bare = true
	b, _ := s.List(ctx, flow)
	if len(p.Rows) != 10 || p.Total != 10 || len(b.Rows) != 10 || b.Total != 0 {
		t.Fatalf("flow rows: %d (total %d), bare %d (total %d)", len(p.Rows), p.Total, len(b.Rows), b.Total)
	}
	for i := range p.Rows {
		if p.Rows[i].RowNum != want[p.Rows[i].Key] || b.Rows[i].Key != p.Rows[i].Key || b.Rows[i].RowNum != 0 {
			t.Fatalf("flow row %d: %s #%d, bare %s #%d", i, p.Rows[i].Key, p.Rows[i].RowNum, b.Rows[i].Key, b.Rows[i].RowNum)
		}
	}
	if p, err := s.List(ctx, rowcall.Filter{Limit: 5, Offset: 100}); err != nil || len(p.Rows) != 0 || p.Total != 39 {
		t.Fatalf("past the end: %+v %v", p, err)
	}
}

// An unfiltered page and a bare filtered one walk the canonical order's index:
// no sort, no window over every row (what D1 bills as rows read).
func TestListWalksTheIndex(t *testing.T) {
	s := newStore(t)
	on := int64(1)
	for _, f := range []rowcall.Filter{{Limit: 50}, {Limit: 50, Offset: 100}, {Enabled: &on, Limit: 50, Bare: true}} {
		q, args, _, _, _ := listQuery(f)
		rows, err := s.DB.Query(`EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			rows.Scan(&id, &parent, &unused, &detail)
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		if !strings.Contains(p, "INDEX directory_canonical") || strings.Contains(p, "TEMP B-TREE") || strings.Contains(p, "CO-ROUTINE") {
			t.Errorf("%+v: plan %s", f, p)
		}
	}
}

// A search whose words match more rows than matchBudget leaves out the
// commonest word: the rows matching only it are not hits, the rows with the
// rarer word still are, ranked as before; a query of the common word alone
// still finds its rows.
func TestSearchBudgetDropsCommonestWord(t *testing.T) {
	s := newStore(t)
	s.MaxParams = 32766
	ctx := context.Background()
	var rows []rowcall.Row
	for i := range matchBudget + 100 {
		r := rowcall.NewRow(fmt.Sprintf("HOUSEKEEPING_%05d", i), rowcall.TypeHTTP)
		r.Target, r.Content = "GET http://127.0.0.1:1/", "# WHAT: archive the workspace logs"
		rows = append(rows, r)
	}
	for _, k := range []string{"ZEBRA_ONE", "ZEBRA_TWO"} {
		r := rowcall.NewRow(k, rowcall.TypeHTTP)
		r.Target, r.Content = "GET http://127.0.0.1:1/", "# WHAT: count the zebras in the workspace"
		rows = append(rows, r)
	}
	if err := s.Upsert(ctx, rows); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "workspace zebras", rowcall.SearchFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, h := range hits {
		keys = append(keys, h.Row.Key)
	}
	if strings.Join(keys, " ") != "ZEBRA_ONE ZEBRA_TWO" {
		t.Errorf("workspace zebras: hits %v, want only the two zebra rows (workspace matches %d rows, over the budget of %d)", keys, matchBudget+102, matchBudget)
	}
	if hits, err := s.Search(ctx, "workspace", rowcall.SearchFilter{Limit: 100}); err != nil || len(hits) != 100 {
		t.Errorf("workspace alone: %d hits (%v), want 100", len(hits), err)
	}
	// Where reads are billed (D1) nothing is counted first: every term is
	// scored, so the zebra rows come first and the workspace rows follow.
	s.BilledReads = true
	hits, err = s.Search(ctx, "workspace zebras", rowcall.SearchFilter{Limit: 100})
	if err != nil || len(hits) != 100 || hits[0].Row.Key != "ZEBRA_ONE" && hits[0].Row.Key != "ZEBRA_TWO" {
		t.Errorf("workspace zebras with BilledReads: %d hits (%v), want 100 with a zebra row first", len(hits), err)
	}
}

// Embedding a row changes no row: the vectors' own events (kind VECTOR) do
// not move LastEvent, which the dispatcher's row cache, the registry's ETag
// and the receipt writer's check compare; NewestEvent, which an in-memory
// vector index follows, moves; a row's write moves both.
func TestVectorEventsDoNotMoveLastEvent(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	r := rowcall.NewRow("WEATHER_NOW", rowcall.TypeHTTP)
	r.Target, r.Content = "GET http://127.0.0.1:1/", "# WHAT: the weather now"
	if err := s.Upsert(ctx, []rowcall.Row{r}); err != nil {
		t.Fatal(err)
	}
	last, _ := s.LastEvent(ctx)
	newest, _ := s.NewestEvent(ctx)
	m := rowcall.EmbedModel{Provider: "test", Name: "m", Dim: 2}
	for _, v := range [][]float32{{1, 0}, {0, 1}} { // an insert, then an update
		if _, err := s.UpsertVectors(ctx, m, []rowcall.Vector{{Key: r.Key, Values: v}}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.LastEvent(ctx); got != last {
		t.Errorf("LastEvent moved from %d to %d on embedding a row", last, got)
	}
	if got, _ := s.NewestEvent(ctx); got != newest+2 {
		t.Errorf("NewestEvent is %d after two vector writes, want %d", got, newest+2)
	}
	r.Content = "# WHAT: the weather now, in Celsius"
	if err := s.Upsert(ctx, []rowcall.Row{r}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.LastEvent(ctx)
	newest2, _ := s.NewestEvent(ctx)
	if got <= last || got != newest2 {
		t.Errorf("after a row's write LastEvent is %d (was %d), NewestEvent %d: want both the new event", got, last, newest2)
	}
}

// A bulk import leaves the word index in one segment, and ask finds its rows;
// a small write does not pay the merge.
func TestBulkUpsertMergesTheWordIndex(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	segments := func() int {
		var n int
		if err := s.DB.QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM directory_fts_idx`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	rows := func(prefix string, n int) []rowcall.Row {
		var out []rowcall.Row
		for i := range n {
			r := rowcall.NewRow(fmt.Sprintf("%s%04d", prefix, i), rowcall.TypeHTTP)
			r.Target, r.Content = "GET http://127.0.0.1:1/", fmt.Sprintf("# WHAT: look up parcel %d by its tracking number", i)
			out = append(out, r)
		}
		return out
	}
	if err := s.Upsert(ctx, rows("SMALL", 40)); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n < 2 {
		t.Fatalf("40 rows in 8 statements left %d segments: the test no longer sees a small write's segments", n)
	}
	if err := s.Upsert(ctx, rows("BULK", compactAfter)); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n != 1 {
		t.Fatalf("a bulk write of %d rows left %d segments in the word index, want 1", compactAfter, n)
	}
	hits, err := s.Search(ctx, "parcel tracking", rowcall.SearchFilter{Limit: 5})
	if err != nil || len(hits) == 0 {
		t.Fatalf("ask after the merge: %v %v", hits, err)
	}
}

// A search of more distinct words than SQLite has result columns (2,000)
// counts their matches in one statement of one parameter and answers: the
// statement is the same for any number of words (termCounts).
func TestSearchManyTerms(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	r := rowcall.NewRow("ZEBRA_COUNT", rowcall.TypeHTTP)
	r.Target, r.Content = "GET http://127.0.0.1:1/", "# WHAT: count the zebras in the workspace"
	if err := s.Upsert(ctx, []rowcall.Row{r}); err != nil {
		t.Fatal(err)
	}
	words := []string{"zebras"}
	for i := range 3000 {
		words = append(words, fmt.Sprintf("w%05d", i))
	}
	hits, err := s.Search(ctx, strings.Join(words, " "), rowcall.SearchFilter{Limit: 5})
	if err != nil || len(hits) != 1 || hits[0].Row.Key != "ZEBRA_COUNT" {
		t.Fatalf("3,001 distinct words: %d hits, %v", len(hits), err)
	}
}

// TestSearchSplitsClosedCompound: a word written closed ("uppercase") finds a
// row that writes it open ("upper case"), and not a row holding one half alone.
func TestSearchSplitsClosedCompound(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	var rows []rowcall.Row
	for k, what := range map[string]string{"UPPER": "Its argument in upper case.", "CASES": "List the support cases.", "PAGE_UP": "Scroll one page up."} {
		r := rowcall.NewRow(k, rowcall.TypeHTTP)
		r.Target, r.Content = "GET http://127.0.0.1:1/", "# WHAT: "+what
		rows = append(rows, r)
	}
	if err := s.Upsert(ctx, rows); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "uppercase", rowcall.SearchFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, h := range hits {
		keys = append(keys, h.Row.Key)
	}
	if strings.Join(keys, " ") != "UPPER" {
		t.Errorf("uppercase: hits %v, want only UPPER", keys)
	}
}
