package test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A property test: for many random credential values, injected through every
// auth form into a real upstream that echoes back everything it received, the
// value never appears in a dispatch answer, a shape preview, a receipt, the
// event log or the host's log.
func TestInjectedSecretsNeverLeak(t *testing.T) {
	echo := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]any{"headers": r.Header, "query": r.URL.RawQuery, "path": r.URL.Path})
		w.Write(b)
	})
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = `abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=&%"'<>:;-_ .~!`
	var secrets, env []string
	for i := range 24 {
		n := 8 + rng.IntN(40)
		b := make([]byte, n)
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		s := fmt.Sprintf("S%02d%s", i, b)
		secrets = append(secrets, s)
		env = append(env, fmt.Sprintf("LEAK_TEST_%d=%s", i, s))
	}
	h := startHost(t, allowLoopback, env...)
	forms := []func(i int) string{
		func(i int) string { return fmt.Sprintf("bearer:LEAK_TEST_%d", i) },
		func(i int) string { return fmt.Sprintf("basic:LEAK_TEST_%d", i) },
		func(i int) string {
			return fmt.Sprintf(`headers:{"X-Api-Key":"$LEAK_TEST_%d","X-Custom":"v-$LEAK_TEST_%d"}`, i, i)
		},
		func(i int) string { return fmt.Sprintf("query:api_key=LEAK_TEST_%d", i) },
	}
	var answers []string
	for i := range secrets {
		key := fmt.Sprintf("LEAK_%d", i)
		createRow(t, h, map[string]any{"key": key, "type": "http", "target": "GET " + echo.URL + "/echo?x=$1", "auth": forms[i%len(forms)](i)})
		for _, shape := range []bool{false, true} {
			got := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": key, "body": "arg", "shape": shape}})
			if got.Status != 200 {
				t.Fatalf("%s: %d %s", key, got.Status, got.Raw)
			}
			answers = append(answers, string(got.Raw))
		}
	}
	if len(echo.requests()) != len(secrets) {
		t.Fatalf("upstream saw %d requests, want %d", len(echo.requests()), len(secrets))
	}
	// The upstream really received each credential (so redaction had work to do).
	received := 0
	for _, r := range echo.requests() {
		all := fmt.Sprint(r.Header) + r.Query
		for _, s := range secrets {
			if strings.Contains(all, s) || strings.Contains(all, url.QueryEscape(s)) || strings.Contains(r.Header.Get("Authorization"), "Basic ") {
				received++
				break
			}
		}
	}
	if received != len(secrets) {
		t.Fatalf("only %d of %d requests carried their credential", received, len(secrets))
	}

	var kept []string
	for _, q := range []string{`SELECT json_group_array(json_array(` + strings.ReplaceAll(receiptCols, ",", "||'',") + `)) FROM receipts`,
		`SELECT json_group_array(COALESCE(before,'') || COALESCE(after,'')) FROM events`} {
		var s string
		if err := h.db(t).QueryRow(q).Scan(&s); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, s)
	}
	h.stop()
	kept = append(kept, h.out.String())
	for _, s := range secrets {
		for _, where := range []struct {
			name string
			text []string
		}{{"dispatch answers", answers}, {"receipts, events, log", kept}} {
			for _, text := range where.text {
				if strings.Contains(text, s) || strings.Contains(text, url.QueryEscape(s)) {
					t.Fatalf("secret %q found in %s: %s", s, where.name, text)
				}
			}
		}
	}
}

const receiptCols = `id,trace,actor,key,runner,outcome,input_sha256,output_sha256,contract_sha256`
