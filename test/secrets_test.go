package test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rowcall/rowcall/test/leak"
)

// A property test: for many random credential values, injected through every
// auth form into a real upstream that echoes back everything it received, as
// JSON and then each header and query value again in every leak.Encodings
// spelling, no 8 bytes of the value can be read (plainly or through any
// decoding, see leak.Views) from a dispatch answer, a shape preview, a
// receipt, the event log or the host's log.
func TestInjectedSecretsNeverLeak(t *testing.T) {
	var seed atomic.Uint64
	echo := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]any{"headers": r.Header, "query": r.URL.RawQuery, "path": r.URL.Path})
		w.Write(b)
		rng := rand.New(rand.NewPCG(seed.Add(1), 3))
		for _, vs := range []map[string][]string{r.Header, r.URL.Query()} {
			for name, v := range vs {
				for _, e := range leak.Encodings {
					fmt.Fprintf(w, "\n%s %s: %s", name, e.Name, e.Enc(strings.Join(v, ","), rng))
				}
			}
		}
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
			answers = append(answers, stringsIn(t, got.Raw)...)
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
	// Every column as text (the hashes are stored as bytes: hex), one JSON array a receipt.
	var cols []string
	for _, c := range strings.Split(receiptCols, ",") {
		cols = append(cols, fmt.Sprintf("CASE WHEN typeof(%[1]s) = 'blob' THEN hex(%[1]s) ELSE %[1]s END", c))
	}
	for _, q := range []string{`SELECT json_group_array(json_array(` + strings.Join(cols, ",") + `)) FROM receipts`,
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
				if frag := leak.Fragment(s, leak.Views(text), nil); frag != "" {
					t.Fatalf("%q of secret %q found in %s: %s", frag, s, where.name, text)
				}
			}
		}
	}
}

// stringsIn is every string in a JSON answer (the result, a preview's fields),
// decoded, as a client reads them.
func stringsIn(t *testing.T, raw []byte) []string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, raw)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

const receiptCols = `id,trace,actor,key,runner,outcome,input_sha256,output_sha256,contract_sha256`
