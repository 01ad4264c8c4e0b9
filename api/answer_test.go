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

// FuzzDispatchRequest: whenever the dispatch body's plain reading takes a
// body, encoding/json takes it too and makes the same request of it; and the
// bodies callers send take the plain path.
func FuzzDispatchRequest(f *testing.F) {
	common := []string{`{"key":"ECHO","body":"hello"}`, `{"key":"NOW"}`, ` { "body" : "a|b" , "key":"K", "shape":true } `,
		`{"key":"WEATHER","body":"37.77|-122.42","shape":false}`, `{}`, "{\"key\":\"é€\",\"body\":\"<&>\"}\n"}
	for _, s := range common {
		var d dispatchRequest
		if !d.decodePlain([]byte(s)) {
			f.Fatalf("%s does not take the plain path", s)
		}
		f.Add(s)
	}
	for _, s := range []string{`{"key":"A","key":"B"}`, `{"Key":"A"}`, `{"key":"a\"b"}`, `{"key":"A",}`, `{"body":1}`, `{"body":null}`,
		`{"shape":tru}`, `{"key":"A"}x`, `{"key":"A""body":"b"}`, "{\"key\":\"\xff\"}", `{"key":"A","shape":truex}`, `[]`, `{"key":"\u0041"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var plain, full dispatchRequest
		if !plain.decodePlain([]byte(s)) {
			return
		}
		if err := json.Unmarshal([]byte(s), &full); err != nil {
			t.Fatalf("%q: the plain path took what encoding/json refuses: %v", s, err)
		}
		if plain != full {
			t.Fatalf("%q: plain %#v, encoding/json %#v", s, plain, full)
		}
	})
}
