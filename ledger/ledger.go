// Package ledger signs rowcall's receipts into one hash chain and verifies it
// offline.
//
// Every receipt carries seq (1, 2, 3…), prev_sha256 (the sha256 of the receipt
// before it), sha256 (the SHA-256 of its canonical JSON, see
// rowcall.Receipt.Canonical) and sig (the host's Ed25519 signature of that
// canonical JSON, base64). Editing a receipt breaks its hash and signature;
// deleting one breaks the seq run and the next receipt's prev_sha256; forging
// one needs the host's private key. Verification needs only the receipts and the
// public key, which hosts serve at /.well-known/rowcall-receipt-keys.
package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"runtime"
	"sync"

	"github.com/rowcall/rowcall"
)

// Signer signs receipts with one Ed25519 key.
type Signer struct {
	key ed25519.PrivateKey
	id  string
}

// NewSigner returns a Signer for the private key derived from seed (32 bytes).
func NewSigner(seed []byte) (*Signer, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("ledger: a signing key seed is %d bytes, got %d", ed25519.SeedSize, len(seed))
	}
	key := ed25519.NewKeyFromSeed(seed)
	return &Signer{key: key, id: KeyID(key.Public().(ed25519.PublicKey))}, nil
}

// KeyID names a public key: the first 16 hex digits of its SHA-256.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// PublicKey is a verification key as hosts publish it.
type PublicKey struct {
	Alg   string `json:"alg"` // "Ed25519"
	KeyID string `json:"key_id"`
	Key   string `json:"public_key"` // base64, 32 bytes
}

// Public returns the signer's public key.
func (s *Signer) Public() PublicKey {
	pub := s.key.Public().(ed25519.PublicKey)
	return PublicKey{Alg: "Ed25519", KeyID: s.id, Key: base64.StdEncoding.EncodeToString(pub)}
}

// Sign links r after the receipt whose (seq, sha256) is (prevSeq, prevHash)
// and signs it.
func (s *Signer) Sign(r *rowcall.Receipt, prevSeq int64, prevHash string) {
	s.SignChain([]*rowcall.Receipt{r}, prevSeq, prevHash)
}

// SignChain links rs in order after (prevSeq, prevHash) and signs each. The
// links are made in order (each hash covers the one before); the signatures,
// which take most of the time, are made on every core.
func (s *Signer) SignChain(rs []*rowcall.Receipt, prevSeq int64, prevHash string) {
	canon := make([][]byte, len(rs))
	for i, r := range rs {
		r.Seq, r.Prev, r.KeyID = prevSeq+1, prevHash, s.id
		canon[i] = r.Canonical()
		r.SHA256 = rowcall.Fingerprint(canon[i])
		prevSeq, prevHash = r.Seq, r.SHA256
	}
	workers := min(runtime.GOMAXPROCS(0), len(rs))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(rs); i += workers {
				rs[i].Sig = base64.StdEncoding.EncodeToString(ed25519.Sign(s.key, canon[i]))
			}
		}()
	}
	wg.Wait()
}

// Keys maps key ids to public keys for verification.
type Keys map[string]ed25519.PublicKey

// ParseKeys reads published public keys.
func ParseKeys(list []PublicKey) (Keys, error) {
	k := Keys{}
	for _, p := range list {
		b, err := base64.StdEncoding.DecodeString(p.Key)
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("ledger: public key %s is not a base64 Ed25519 key", p.KeyID)
		}
		if KeyID(b) != p.KeyID {
			return nil, fmt.Errorf("ledger: public key %s does not match its key_id (it is %s)", p.KeyID, KeyID(b))
		}
		k[p.KeyID] = b
	}
	return k, nil
}

// Check verifies one receipt on its own: its hash and its signature.
func (k Keys) Check(r *rowcall.Receipt) error {
	pub, ok := k[r.KeyID]
	if !ok {
		return fmt.Errorf("receipt seq %d (%s): signed by key %q, which is not among the keys given", r.Seq, r.ID, r.KeyID)
	}
	c := r.Canonical()
	if rowcall.Fingerprint(c) != r.SHA256 {
		return fmt.Errorf("receipt seq %d (%s): its content does not match its sha256 — the receipt was altered", r.Seq, r.ID)
	}
	sig, err := base64.StdEncoding.DecodeString(r.Sig)
	if err != nil || !ed25519.Verify(pub, c, sig) {
		return fmt.Errorf("receipt seq %d (%s): the signature does not verify — the receipt was altered or forged", r.Seq, r.ID)
	}
	return nil
}

// Verify checks a run of receipts in seq order: each one's hash and signature,
// and that each links to the one before it. The error names the first bad
// link. A chain that does not start at seq 1 is checked from its first receipt.
func (k Keys) Verify(chain []rowcall.Receipt) error {
	for i := range chain {
		r := &chain[i]
		if err := k.Check(r); err != nil {
			return err
		}
		if i == 0 {
			if r.Seq == 1 && r.Prev != "" {
				return fmt.Errorf("receipt seq 1 (%s): the first receipt must have no prev_sha256", r.ID)
			}
			continue
		}
		prev := &chain[i-1]
		if r.Seq != prev.Seq+1 {
			return fmt.Errorf("receipt seq %d (%s): the chain jumps from seq %d to %d — %d receipt(s) missing after %s",
				r.Seq, r.ID, prev.Seq, r.Seq, r.Seq-prev.Seq-1, prev.ID)
		}
		if r.Prev != prev.SHA256 {
			return fmt.Errorf("receipt seq %d (%s): prev_sha256 %s does not match seq %d's sha256 %s — a receipt was replaced",
				r.Seq, r.ID, short(r.Prev), prev.Seq, short(prev.SHA256))
		}
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}
