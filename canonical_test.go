package rowcall

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// reference is the receipt's JSON minus sha256 and sig, keys sorted: what
// Canonical must mean (it differs only in how strings are escaped).
func reference(r *Receipt) []byte {
	c := *r
	c.SHA256, c.Sig = "", ""
	raw, _ := json.Marshal(c)
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	d.Decode(&m)
	delete(m, "sha256")
	delete(m, "sig")
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.Encode(m)
	return bytes.TrimRight(out.Bytes(), "\n")
}

func TestCanonicalMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	strs := []string{"", "inv_abc", `quote " and \ back`, "tab\tnew\nline", "<html> & amp", "ünïcødé ✓", "\u2028sep", "\x01ctl", string([]byte{0xff, 'x'})}
	floats := []float64{0, 0.05, 1.25, 1e-7, 3.5e-9, 1e21, 123456.789, 0.1 + 0.2, -2.5}
	pick := func() string { return strs[rng.IntN(len(strs))] }
	for i := range 2000 {
		r := Receipt{ID: pick(), Trace: pick(), Parent: pick(), Actor: pick(), Key: pick(), Type: Type(pick()), Runner: pick(),
			StartedAt: pick(), Millis: floats[rng.IntN(len(floats))], OK: rng.IntN(2) == 0, Material: rng.IntN(2) == 0,
			Shape: rng.IntN(2) == 0, CostUSD: floats[rng.IntN(len(floats))], Status: rng.IntN(3) * 200, Outcome: pick(),
			Input: pick(), Output: pick(), Contract: pick(), TokenID: pick(), Seq: int64(rng.IntN(1000)), Prev: pick(),
			KeyID: pick(), SHA256: pick(), Sig: pick(), Approval: pick(), Approver: pick(), PersonIssuer: pick(), PersonSubject: pick()}
		got, want := r.Canonical(), reference(&r)
		// Appended after other bytes (a signer's reused buffer), it is the same.
		prefix := []byte(pick())
		prefix = prefix[:len(prefix):len(prefix)] // each append below gets its own copy
		if !bytes.Equal(r.AppendCanonical(prefix), append(prefix, got...)) {
			t.Fatalf("case %d: appended after %q: %s, want %s", i, prefix, r.AppendCanonical(prefix), got)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("case %d: not JSON: %s", i, got)
		}
		json.Unmarshal(want, &w)
		if gb, wb := mustJSON(g), mustJSON(w); !bytes.Equal(gb, wb) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// A fixed vector: the exact bytes that are signed (RFC 8785 form).
func TestCanonicalVector(t *testing.T) {
	r := Receipt{ID: "inv_c23irnzhx1", Trace: "t_jweoafmw", Actor: "owner:terminal-key", Key: "ZZ", Type: TypeHTTP, Runner: "http",
		StartedAt: "2026-07-26T04:36:19.832Z", Millis: 3.126, CostUSD: 1e-7, OK: true, Material: true, Outcome: "ERR:x <\u2028>\n",
		Input: "i", Output: "o", Contract: "c", Seq: 2, Prev: "p", KeyID: "k", SHA256: "ignored", Sig: "ignored"}
	want := `{"actor":"owner:terminal-key","contract_sha256":"c","cost_usd":1e-7,"duration_ms":3.126,"input_sha256":"i",` +
		`"invocation_id":"inv_c23irnzhx1","key":"ZZ","key_id":"k","material":true,"ok":true,"outcome":"ERR:x <` + "\u2028" + `>\n",` +
		`"output_sha256":"o","prev_sha256":"p","runner":"http","seq":2,"shape":false,"started_at":"2026-07-26T04:36:19.832Z",` +
		`"trace":"t_jweoafmw","type":"http"}`
	if got := string(r.Canonical()); got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

func BenchmarkCanonical(b *testing.B) {
	r := Receipt{ID: "inv_c23irnzhx1", Trace: "t_jweoafmw", Actor: "owner:terminal-key", Key: "ZZ_TEST_TEMPERATURE", Type: TypeHTTP,
		Runner: "http", StartedAt: "2026-07-26T04:36:19.832Z", Millis: 3.126, OK: true, Material: true, Outcome: "ok",
		Input: Fingerprint([]byte("a")), Output: Fingerprint([]byte("b")), Contract: Fingerprint([]byte("c")), Seq: 41, Prev: Fingerprint([]byte("d")), KeyID: "0123456789abcdef"}
	for b.Loop() {
		r.Canonical()
	}
}
