package test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// ROWCALL_ASK_LEARN=tokens: the owner's ask and call teach nothing, a teach
// token's do; the listing shows only the token's phrase.
//
//	go test ./test -count 1 -run TestAskLearnTokensOnly
func TestAskLearnTokensOnly(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "sent") })
	h := startHost(t, allowLoopback, "ROWCALL_ASK_LEARN=tokens", "ROWCALL_EMBED_PROVIDER=off")
	createRow(t, h, map[string]any{"key": "L_SMS", "type": "http", "target": "GET " + up.URL + "/sms", "category": "learn_setting",
		"content": "# WHAT: Send an SMS text message to a phone number.\n# WHEN_TO_USE: someone must be notified on their phone."})
	teacher, _, _ := mint(t, h, map[string]any{"categories": []string{"learn_setting"}, "teach": true})

	lesson := func(as func(req) resp, q string) {
		t.Helper()
		got := as(req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape(q)})
		if keys := matchKeys(got); len(keys) == 0 || keys[0] != "L_SMS" {
			t.Fatalf("ask %q: %s", q, got.Raw)
		}
		expect(t, as(req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "L_SMS", "body": "x"}}), 200, map[string]any{"ok": true})
	}
	lesson(func(r req) resp { return h.do(t, r) }, "send a text message to my phone")
	lesson(func(r req) resp { return asToken(t, h, teacher, r) }, "text message the phone of the courier")

	got := h.do(t, req{Method: "GET", Path: "/api/learned?key=L_SMS"})
	expect(t, got, 200, nil)
	ps, _ := got.JSON["phrases"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["phrase"] != "text message the phone of the courier" {
		t.Fatalf("phrases learned with ROWCALL_ASK_LEARN=tokens: %s", got.Raw)
	}
}
