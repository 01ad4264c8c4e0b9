package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// `rowcall receipt export` writes the chain page by page in the bytes the
// whole document written at once by printJSON would have: with and without a
// checkpoint, empty, and across pages.
func TestReceiptExportIsTheWholeDocument(t *testing.T) {
	for _, tc := range []struct {
		n          int
		checkpoint bool
	}{{0, false}, {0, true}, {3, true}, {2500, true}, {1000, false}} {
		all := []any{}
		for i := range tc.n {
			all = append(all, map[string]any{"seq": float64(i + 1), "invocation_id": "inv_" + strconv.Itoa(i),
				"outcome": "ok <&> é", "ok": true, "cost_usd": 0.0001, "batch": map[string]any{"leaves": []any{"a", "b"}}})
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/.well-known/rowcall-checkpoint" {
				if !tc.checkpoint {
					http.NotFound(w, r)
					return
				}
				fmt.Fprint(w, "host\n3\nabc=\n\n— host <sig>\n")
				return
			}
			after, _ := strconv.Atoi(r.URL.Query().Get("after"))
			limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
			page := all[min(after, len(all)):min(after+limit, len(all))]
			var next any
			if len(page) == limit {
				next = after + limit
			}
			json.NewEncoder(w).Encode(map[string]any{"receipts": page, "next_after": next})
		}))
		want := map[string]any{"receipts": all}
		if tc.checkpoint {
			want["checkpoint"] = "host\n3\nabc=\n\n— host <sig>\n"
		}
		var old bytes.Buffer
		printJSON(&old, want) // what the export wrote before it streamed
		code, out, errs := run(t, map[string]string{"ROWCALL_OWNER_KEY": "k"}, "receipt", "export", "--url", srv.URL)
		srv.Close()
		if code != 0 || out != old.String() {
			t.Errorf("%d receipts, checkpoint %v: exit %d %s\n%s\nwant\n%s", tc.n, tc.checkpoint, code, errs, out, old.String())
		}
	}
}
