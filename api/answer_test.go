package api

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
)

// TestAnswerIsTheOrderedObject: the dispatch answer, written field by field,
// is byte for byte the object the generic ordered writer makes of the same
// pairs — keys in the seed's order, every string escaped as RFC 8785 does
// (quotes, backslashes, control characters, an invalid UTF-8 byte, U+2028, '<'
// as itself), the plan in shape mode, a receipt with no id — and valid JSON.
func TestAnswerIsTheOrderedObject(t *testing.T) {
	odd := "a\"b\\c\n\t\x01<&>\u2028é\xff"
	results := []struct {
		res   dispatch.Result
		shape bool
	}{
		{res: dispatch.Result{OK: true, Ran: true, Trace: "t_1", Result: "hello", Receipt: rowcall.Receipt{ID: "inv_1", Contract: "ab12"}}},
		{res: dispatch.Result{OK: false, Ran: true, Trace: odd, Result: "ERR:fn:exit:1 " + odd, Receipt: rowcall.Receipt{ID: "inv_" + odd, Contract: odd}}},
		{res: dispatch.Result{Trace: "t_2", Result: "refused:x"}}, // no receipt id
		{res: dispatch.Result{OK: true, Trace: "t_3", Result: "SHAPE:fn:echo 1 args", Plan: map[string]any{"module": "echo", "argv": []string{"echo", odd}},
			Receipt: rowcall.Receipt{ID: "inv_3", Contract: "cd"}}, shape: true},
		{res: dispatch.Result{OK: true, Trace: "t_4", Result: "", Receipt: rowcall.Receipt{ID: "inv_4"}}, shape: true}, // a nil plan
	}
	for _, base := range []string{"http://127.0.0.1:8080", "https://rowcall.example/\"x"} {
		h := &Handler{cfg: Config{PublicURL: base}}
		for i, c := range results {
			w := httptest.NewRecorder()
			h.answer(w, httptest.NewRequest("POST", "/api/dispatch", nil), c.res, c.shape)
			res := c.res
			proof := ordered{{"ok", res.Receipt.ID != ""}, {"invocation_id", res.Receipt.ID}, {"public_receipt", h.receiptURL(nil, res.Receipt.ID)},
				{"contract_sha256", res.Receipt.Contract}}
			want := ordered{{"ok", res.OK}, {"ran", res.Ran}, {"trace", res.Trace}, {"result", res.Result}}
			if c.shape {
				want = append(want, kv{"shape", res.Plan})
			}
			wb, err := append(want, kv{"proof", proof}).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Body.String(); got != string(wb)+"\n" {
				t.Errorf("%d (%s): answer\n%s\nwant\n%s", i, base, got, wb)
			}
			if !json.Valid(w.Body.Bytes()) {
				t.Errorf("%d: not JSON: %s", i, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" || w.Code != 200 {
				t.Errorf("%d: %d, Content-Type %q", i, w.Code, ct)
			}
		}
	}
}
