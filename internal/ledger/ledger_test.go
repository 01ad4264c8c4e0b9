package ledger

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

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
		s.SignChain([]*rowcall.Receipt{&r}, int64(i), prev)
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
		{"edited key id", func(c []rowcall.Receipt) []rowcall.Receipt { c[0].KeyID = "nope"; return c }, "seq 1 (inv_a): its content does not match"},
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
	s.SignChain([]*rowcall.Receipt{&r}, 1, replaced[0].SHA256)
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
	key, id := s.private()
	r := rowcall.Receipt{ID: "inv_old", Key: "K", Outcome: "ok", Seq: 1, KeyID: id}
	r.SHA256 = rowcall.Fingerprint(r.Canonical())
	r.Sig = base64.StdEncoding.EncodeToString(ed25519.Sign(key, r.Canonical()))
	if err := keys.Check(&r); err != nil {
		t.Fatalf("old receipt: %v", err)
	}
	r.Outcome = "forged"
	r.SHA256 = rowcall.Fingerprint(r.Canonical())
	if err := keys.Check(&r); err == nil || !strings.Contains(err.Error(), "signature does not verify") {
		t.Fatalf("edited old receipt: %v", err)
	}
}

// A receipt intact but signed by a key not given is reported as unverifiable
// (ErrUnknownKey), not as altered; an altered one is never ErrUnknownKey.
func TestUnknownKey(t *testing.T) {
	_, good := chain(t, 2)
	other, _ := chain(t, 0)
	keys, _ := ParseKeys([]PublicKey{other.Public()})
	err := keys.Check(&good[1])
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "seq 2 (inv_b): signed by key") {
		t.Fatalf("foreign key: %v", err)
	}
	good[1].Outcome = "forged"
	if err := keys.Check(&good[1]); err == nil || errors.Is(err, ErrUnknownKey) {
		t.Fatalf("altered and foreign: %v", err)
	}
}

// A checkpoint round-trips through its signed-note form, is refused when
// altered or signed by another key, and matches a chain exactly when the
// chain reaches its seq with the same receipt there.
func TestCheckpoint(t *testing.T) {
	s, good := chain(t, 5)
	keys, _ := ParseKeys([]PublicKey{s.Public()})
	cp := Checkpoint{Origin: "rowcall.example/receipts", Size: 3, Head: good[2].SHA256}
	signed, err := s.SignCheckpoint(cp)
	if err != nil {
		t.Fatal(err)
	}
	text := string(signed)
	root, _ := hex.DecodeString(good[2].SHA256)
	want := "rowcall.example/receipts\n3\n" + base64.StdEncoding.EncodeToString(root) + "\n\n\u2014 rowcall.example/receipts "
	if !strings.HasPrefix(text, want) {
		t.Fatalf("checkpoint text:\n%s\nwant it to start with\n%s", text, want)
	}
	got, err := keys.OpenCheckpoint(signed)
	if err != nil || got != cp {
		t.Fatalf("open: %+v %v, want %+v", got, err, cp)
	}
	// The note verifies with the standard library too, under the C2SP key name.
	key, _ := s.private()
	vkey, _ := note.NewEd25519VerifierKey(cp.Origin, key.Public().(ed25519.PublicKey))
	v, _ := note.NewVerifier(vkey)
	if _, err := note.Open(signed, note.VerifierList(v)); err != nil {
		t.Fatalf("x/mod/sumdb/note: %v", err)
	}
	if _, err := keys.OpenCheckpoint([]byte(strings.Replace(text, "\n3\n", "\n2\n", 1))); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("altered checkpoint: %v", err)
	}
	other, _ := chain(t, 0)
	otherKeys, _ := ParseKeys([]PublicKey{other.Public()})
	if _, err := otherKeys.OpenCheckpoint(signed); err == nil || !strings.Contains(err.Error(), "not signed by any of the keys") {
		t.Errorf("foreign checkpoint: %v", err)
	}
	if _, err := keys.OpenCheckpoint([]byte("hello\n")); err == nil || !strings.Contains(err.Error(), "not a signed checkpoint") {
		t.Errorf("not a note: %v", err)
	}

	if err := cp.Match(good); err != nil {
		t.Errorf("longer chain: %v", err)
	}
	if err := cp.Match(good[:3]); err != nil {
		t.Errorf("chain of exactly the checkpoint: %v", err)
	}
	if err := cp.Match(good[:2]); err == nil || !strings.Contains(err.Error(), "ends at seq 2, but the checkpoint was signed at seq 3") {
		t.Errorf("truncated: %v", err)
	}
	fork := append([]rowcall.Receipt(nil), good[:2]...)
	r := rowcall.Receipt{ID: "inv_fork", Key: "K", Outcome: "ok"}
	s.SignChain([]*rowcall.Receipt{&r}, 2, fork[1].SHA256)
	fork = append(fork, r)
	if err := keys.Verify(fork); err != nil {
		t.Fatal(err)
	}
	if err := cp.Match(fork); err == nil || !strings.Contains(err.Error(), "receipt seq 3 (inv_fork)") || !strings.Contains(err.Error(), "forks") {
		t.Errorf("fork: %v", err)
	}
	empty, err := s.SignCheckpoint(Checkpoint{Origin: "o"})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := keys.OpenCheckpoint(empty); err != nil || c.Size != 0 || c.Match(nil) != nil {
		t.Errorf("empty chain: %+v %v", c, err)
	}
	if _, err := s.SignCheckpoint(Checkpoint{Origin: "has space", Size: 0}); err == nil {
		t.Error("an origin with a space signed")
	}
}

// BenchmarkCheck is what the public confirm adds to each answer: one
// receipt's canonical hash, batch path and signature checked.
func BenchmarkCheck(b *testing.B) {
	s, _ := NewSigner(make([]byte, 32))
	keys, _ := ParseKeys([]PublicKey{s.Public()})
	rs := make([]*rowcall.Receipt, 8)
	for i := range rs {
		rs[i] = &rowcall.Receipt{ID: "inv_bench", Key: "K", Outcome: "ok", Millis: 1.25, Input: strings.Repeat("a", 64)}
	}
	s.SignChain(rs, 0, "")
	for b.Loop() {
		if err := keys.Check(rs[5]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignCheckpoint is the signing work of one GET
// /.well-known/rowcall-checkpoint (its one-row read aside).
func BenchmarkSignCheckpoint(b *testing.B) {
	s, _ := NewSigner(make([]byte, 32))
	cp := Checkpoint{Origin: "rowcall/receipts", Size: 42, Head: strings.Repeat("ab", 32)}
	for b.Loop() {
		if _, err := s.SignCheckpoint(cp); err != nil {
			b.Fatal(err)
		}
	}
}

// Verify (for these tests) checks a run of receipts in seq order: each one's hash and signature,
// and that each links to the one before it. The error names the first bad
// link. A chain that does not start at seq 1 is checked from its first receipt.
func (k Keys) Verify(chain []rowcall.Receipt) error {
	c := k.NewChain()
	for i := range chain {
		if err := c.Add(&chain[i]); err != nil {
			return err
		}
	}
	return nil
}

// TestSignWith signs through SignWith's function while it answers a signature,
// and with ed25519 from its first failure on: the chain verifies either way.
func TestSignWith(t *testing.T) {
	seed := make([]byte, 32)
	rand.Read(seed)
	s, _ := NewSigner(seed)
	key := ed25519.NewKeyFromSeed(seed)
	calls, fail := 0, false
	s.SignWith(func(msg []byte) ([]byte, error) {
		calls++
		if fail {
			return nil, errors.New("the platform could not sign")
		}
		return ed25519.Sign(key, msg), nil
	})
	keys, _ := ParseKeys([]PublicKey{s.Public()})
	var rs []rowcall.Receipt
	prev := ""
	for i := range 4 {
		fail = i == 2
		r := rowcall.Receipt{ID: "inv_" + string(rune('a'+i)), Key: "K", Outcome: "ok"}
		s.SignChain([]*rowcall.Receipt{&r}, int64(i), prev)
		prev = r.SHA256
		rs = append(rs, r)
	}
	if err := keys.Verify(rs); err != nil {
		t.Fatalf("chain: %v", err)
	}
	if calls != 3 {
		t.Errorf("the function signed %d times, want 3 (then Go signs)", calls)
	}
}
