package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/directory"
	"github.com/rowcall/rowcall/internal/rowgen"
	"github.com/rowcall/rowcall/internal/testenv"
)

// The streamed registry document and receipt pages are the bytes the old
// handlers wrote from the whole list in memory (the encoders kept below), on
// one cursor and in pages (ReadPage, as on D1 and libSQL), plain and gzipped.
func TestStreamedAnswersAreTheOldBytes(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	rows := rowgen.Noise(1200, 3)
	odd := rowcall.NewRow("ODD_HTML", rowcall.TypeHTTP)
	odd.Target, odd.Content, odd.Category = "https://example.com/?a=1&b=<2>", "# WHAT: <b>bold</b> & \"quoted\" é \u2028 line", "odd"
	seq := int64(3)
	odd.Seq = &seq
	rows = append(rows, odd)
	for i := range 20 { // pinned seqs, some equal, so pages cut through ties
		r := rows[i*7]
		s := int64(i / 3)
		r.Seq = &s
		rows[i*7] = r
	}
	hidden := rows[5]
	hidden.Enabled = 0
	rows[5] = hidden
	if err := store.Upsert(ctx, rows); err != nil {
		t.Fatal(err)
	}
	log := testenv.Receipts(t, store)
	for i := range 25 {
		rc := rowcall.Receipt{ID: "inv_" + strconv.Itoa(i), Trace: "t_" + strconv.Itoa(i), Actor: "owner:<k>", Key: "K&" + strconv.Itoa(i),
			Type: rowcall.TypeHTTP, Runner: "http", StartedAt: time.Now().UTC().Format(rowcall.Timestamp), OK: true, Outcome: "ok <&>"}
		if err := <-log.Append(rc); err != nil {
			t.Fatal(err)
		}
	}
	ownerKey := "k_test_owner_key_0123456789abcdef"
	h := New(Config{OwnerKeys: func() []string { return []string{ownerKey} }}, directory.New(store, ""), store, testenv.Dispatcher(t, nil))

	get := func(path string, gz bool) []byte {
		t.Helper()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+ownerKey)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		body := w.Body.Bytes()
		if gz {
			if w.Header().Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s: not gzipped", path)
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		return body
	}
	for _, page := range []int{0, 7, 500} {
		store.ReadPage = page
		for _, all := range []bool{false, true} {
			want, err := store.AllRows(ctx, nil, all)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(want); n < 1200 || all == (n == 1200) {
				t.Fatalf("all=%v: %d rows", all, n)
			}
			// The old registry handler's encoder.
			var old bytes.Buffer
			enc := json.NewEncoder(&old)
			enc.SetEscapeHTML(false)
			enc.Encode(ordered{{"count", len(want)}, {"rows", want}})
			path := "/api/dispatch?registry=1"
			if all {
				path += "&all=1"
			}
			for _, gz := range []bool{false, true} {
				if got := get(path, gz); !bytes.Equal(got, old.Bytes()) {
					t.Errorf("ReadPage %d, all=%v, gzip=%v: %d bytes, want the old %d", page, all, gz, len(got), old.Len())
				}
			}
		}
		for _, q := range []struct{ after, limit int }{{0, 1000}, {0, 25}, {0, 10}, {20, 10}, {25, 10}} {
			list, err := store.Receipts(ctx, int64(q.after), q.limit)
			if err != nil {
				t.Fatal(err)
			}
			// The old receipts handler.
			var next any
			if len(list) == q.limit {
				next = list[len(list)-1].Seq
			}
			old := httptest.NewRecorder()
			writeJSON(old, http.StatusOK, ordered{{"receipts", list}, {"next_after", next}})
			path := "/api/receipts?after=" + strconv.Itoa(q.after) + "&limit=" + strconv.Itoa(q.limit)
			if got := get(path, false); !bytes.Equal(got, old.Body.Bytes()) {
				t.Errorf("ReadPage %d, %s:\n%s\nwant the old\n%s", page, path, got, old.Body)
			}
		}
	}
}
