package ledger

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

func chain(t *testing.T, n int) (*Signer, []rowcall.Receipt) {
	seed := make([]byte, 32)
	rand.Read(seed)
	s, err := NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	var out []rowcall.Receipt
	prev := ""
	for i := range n {
		r := rowcall.Receipt{ID: "inv_" + string(rune('a'+i)), Key: "K", Outcome: "ok", Millis: 1.25, Input: "x"}
		s.Sign(&r, int64(i), prev)
		prev = r.SHA256
		out = append(out, r)
	}
	return s, out
}

func TestVerify(t *testing.T) {
	s, good := chain(t, 5)
	keys, err := ParseKeys([]PublicKey{s.Public()})
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Verify(good); err != nil {
		t.Fatalf("good chain: %v", err)
	}
	cases := []struct {
		name   string
		break_ func([]rowcall.Receipt) []rowcall.Receipt
		want   string
	}{
		{"edited field", func(c []rowcall.Receipt) []rowcall.Receipt { c[2].Outcome = "ERR:x"; return c }, "seq 3 (inv_c): its content does not match"},
		{"edited and rehashed", func(c []rowcall.Receipt) []rowcall.Receipt {
			c[2].Outcome = "ERR:x"
			c[2].SHA256 = rowcall.Fingerprint(c[2].Canonical())
			return c
		}, "seq 3 (inv_c): the signature does not verify"},
		{"removed", func(c []rowcall.Receipt) []rowcall.Receipt { return append(c[:1], c[2:]...) }, "seq 3 (inv_c): the chain jumps from seq 1 to 3"},
		{"unknown key", func(c []rowcall.Receipt) []rowcall.Receipt { c[0].KeyID = "nope"; return c }, "seq 1 (inv_a): signed by key"},
	}
	for _, c := range cases {
		broken := c.break_(append([]rowcall.Receipt(nil), good...))
		err := keys.Verify(broken)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A replaced receipt, validly signed by the same key but not the one that was
	// chained, is caught by the next link.
	replaced := append([]rowcall.Receipt(nil), good...)
	r := replaced[1]
	r.Outcome = "forged"
	s.Sign(&r, 1, replaced[0].SHA256)
	replaced[1] = r
	if err := keys.Verify(replaced); err == nil || !strings.Contains(err.Error(), "seq 3 (inv_c): prev_sha256") {
		t.Errorf("replaced: %v", err)
	}
}

// TestBatches signs groups of every size up to 17 with one signature each and
// checks that every receipt verifies alone, that the group still chains, and
// that a receipt whose batch path, index or neighbour is changed does not.
func TestBatches(t *testing.T) {
	s, _ := chain(t, 0)
	keys, err := ParseKeys([]PublicKey{s.Public()})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 17; n++ {
		rs := make([]rowcall.Receipt, n)
		ptrs := make([]*rowcall.Receipt, n)
		for i := range rs {
			rs[i] = rowcall.Receipt{ID: "inv_" + strings.Repeat("x", i+1), Key: "K", Outcome: "ok"}
			ptrs[i] = &rs[i]
		}
		s.SignChain(ptrs, 41, "ab")
		if err := keys.Verify(rs); err != nil {
			t.Fatalf("batch of %d: %v", n, err)
		}
		for i := range rs {
			if rs[i].Sig != rs[0].Sig || rs[i].Batch.Size != n || rs[i].Batch.Index != i {
				t.Fatalf("batch of %d, receipt %d: sig/batch %+v", n, i, rs[i].Batch)
			}
			if err := keys.Check(&rs[i]); err != nil {
				t.Fatalf("batch of %d, receipt %d alone: %v", n, i, err)
			}
		}
		if n == 1 {
			continue
		}
		last := rs[n-1]
		tampered := []func(r *rowcall.Receipt){
			func(r *rowcall.Receipt) {
				r.Batch.Path = append([]string{strings.Repeat("0", 64)}, r.Batch.Path[1:]...)
			},
			func(r *rowcall.Receipt) { r.Batch.Index = (r.Batch.Index + 1) % n },
			func(r *rowcall.Receipt) { r.Batch.Path = r.Batch.Path[1:] },
			func(r *rowcall.Receipt) { r.Batch.Size = 1 },
		}
		for k, tamper := range tampered {
			r := last
			r.Batch = &rowcall.Batch{Index: last.Batch.Index, Size: last.Batch.Size, Path: append([]string(nil), last.Batch.Path...)}
			tamper(&r)
			if err := keys.Check(&r); err == nil {
				t.Errorf("batch of %d: tampering %d with the path verified", n, k)
			}
		}
	}
}

// A receipt written before batches (no batch field) carries a signature of
// its canonical form; it still verifies, and an edit to it still does not.
func TestReceiptBeforeBatches(t *testing.T) {
	s, _ := chain(t, 0)
	keys, _ := ParseKeys([]PublicKey{s.Public()})
	r := rowcall.Receipt{ID: "inv_old", Key: "K", Outcome: "ok", Seq: 1, KeyID: s.id}
	r.SHA256 = rowcall.Fingerprint(r.Canonical())
	r.Sig = base64.StdEncoding.EncodeToString(ed25519.Sign(s.key, r.Canonical()))
	if err := keys.Check(&r); err != nil {
		t.Fatalf("old receipt: %v", err)
	}
	r.Outcome = "forged"
	r.SHA256 = rowcall.Fingerprint(r.Canonical())
	if err := keys.Check(&r); err == nil || !strings.Contains(err.Error(), "signature does not verify") {
		t.Fatalf("edited old receipt: %v", err)
	}
}
