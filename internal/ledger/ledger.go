// Package ledger signs rowcall's receipts into one hash chain and verifies it
// offline.
//
// Every receipt carries seq (1, 2, 3…), prev_sha256 (the sha256 of the receipt
// before it), sha256 (the SHA-256 of its canonical JSON, see
// rowcall.Receipt.Canonical), sig and batch. The writer stores receipts in
// groups and signs each group once: sig is the host's Ed25519 signature
// (base64) of the text "rowcall receipt root " followed by the hex root of a
// Merkle tree over the group's receipts, and batch holds the receipt's index,
// the group's size and the path of sibling hashes from the receipt to the root.
// The tree is RFC 6962's shape with a simpler split (adjacent pairs, an odd
// last node carried up): leaf = SHA-256(0x00 ‖ sha256 bytes), node = SHA-256(0x01
// ‖ left ‖ right). A group of one is a tree of one leaf.
//
// Editing a receipt breaks its hash and its path to the signed root; deleting
// one breaks the seq run and the next receipt's prev_sha256; forging one needs
// the host's private key. Verification needs only the receipts and the public
// key, which hosts serve at /.well-known/rowcall-receipt-keys. Deleting the
// newest receipts leaves a chain that verifies; a Checkpoint (a signed chain
// head, served at /.well-known/rowcall-checkpoint) saved earlier catches that.
//
// Keys.Check verifies one receipt (the public confirm does it on every
// answer), Keys.Verify a chain, Checkpoint.Match a chain against a checkpoint.
package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rowcall/rowcall"
)

// Signer signs receipts with one Ed25519 key.
//
// The key is derived from its seed on first use (a signature, Public), not
// by NewSigner: the derivation's first run (Ed25519's base-point table, and on
// js/wasm the engine compiling that code) is the largest piece of a worker
// isolate's start, and a first request that signs nothing does not pay it.
type Signer struct {
	// private returns the signing key and its key_id, derived on the
	// first call.
	private func() (ed25519.PrivateKey, string)

	sign atomic.Pointer[func(msg []byte) ([]byte, error)] // SignWith's; nil: ed25519.Sign
}

// SignWith has SignChain sign with f, which must return the Ed25519
// signature of msg under this signer's seed (the worker's WebCrypto: native
// code, where Go's ed25519 on js/wasm is the largest piece of a receipt's
// CPU). Ed25519 signatures are deterministic, so f's are the bytes
// ed25519.Sign makes; an error or a signature of the wrong size is signed
// again with ed25519.Sign, and f is not used again.
func (s *Signer) SignWith(f func(msg []byte) ([]byte, error)) {
	if f == nil {
		s.sign.Store(nil)
		return
	}
	s.sign.Store(&f)
}

// signed is msg's signature under key: through SignWith's f while it works,
// else ed25519.Sign.
func (s *Signer) signed(key ed25519.PrivateKey, msg []byte) []byte {
	if f := s.sign.Load(); f != nil {
		if sig, err := (*f)(msg); err == nil && len(sig) == ed25519.SignatureSize {
			return sig
		}
		s.SignWith(nil)
	}
	return ed25519.Sign(key, msg)
}

// NewSigner returns a Signer for the private key derived from seed (32 bytes).
func NewSigner(seed []byte) (*Signer, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("ledger: a signing key seed is %d bytes, got %d", ed25519.SeedSize, len(seed))
	}
	seed = bytes.Clone(seed)
	return &Signer{private: sync.OnceValues(func() (ed25519.PrivateKey, string) {
		key := ed25519.NewKeyFromSeed(seed)
		return key, KeyID(key.Public().(ed25519.PublicKey))
	})}, nil
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
	key, id := s.private()
	return PublicKey{Alg: "Ed25519", KeyID: id, Key: base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))}
}

// SignChain links rs in order after (prevSeq, prevHash) and signs them with
// one signature over the Merkle root of their hashes.
func (s *Signer) SignChain(rs []*rowcall.Receipt, prevSeq int64, prevHash string) {
	key, id := s.private()
	leaves := make([][]byte, len(rs))
	var canonical []byte // one buffer for the group's canonical forms
	for i, r := range rs {
		r.Seq, r.Prev, r.KeyID = prevSeq+1, prevHash, id
		canonical = r.AppendCanonical(canonical[:0])
		sum := sha256.Sum256(canonical)
		r.SHA256 = hex.EncodeToString(sum[:]) // rowcall.Fingerprint
		prevSeq, prevHash = r.Seq, r.SHA256
		leaves[i] = hashed(0, sum[:])
	}
	levels := [][][]byte{leaves}
	for level := leaves; len(level) > 1; {
		level = parents(level)
		levels = append(levels, level)
	}
	sig := base64.StdEncoding.EncodeToString(s.signed(key, rootMessage(levels[len(levels)-1][0])))
	// Each node's hex, made once: a node is on the path of every receipt
	// under its sibling.
	hexes := make([][]string, len(levels)-1)
	for l := range hexes {
		hexes[l] = make([]string, len(levels[l]))
	}
	for i, r := range rs {
		b := &rowcall.Batch{Index: i, Size: len(rs), Path: make([]string, 0, len(levels)-1)}
		for idx, l := i, 0; l < len(levels)-1; idx, l = idx/2, l+1 {
			if sib := idx ^ 1; sib < len(levels[l]) {
				if hexes[l][sib] == "" {
					hexes[l][sib] = hex.EncodeToString(levels[l][sib])
				}
				b.Path = append(b.Path, hexes[l][sib])
			}
		}
		r.Sig, r.Batch = sig, b
	}
}

// leaf is the tree's leaf for a receipt's sha256 (hex; a malformed one hashes
// as its bytes, so it can only fail to verify).
func leaf(sha string) []byte {
	b, err := hex.DecodeString(sha)
	if err != nil {
		b = []byte(sha)
	}
	return hashed(0, b)
}

func hashed(prefix byte, parts ...[]byte) []byte {
	var buf [1 + 2*sha256.Size]byte // a node's message: the prefix and two hashes
	msg := append(buf[:0], prefix)
	for _, p := range parts {
		msg = append(msg, p...)
	}
	sum := sha256.Sum256(msg)
	return sum[:]
}

// parents is the tree's next level up: adjacent pairs hashed together, an odd
// last node carried up as it is.
func parents(level [][]byte) [][]byte {
	up := make([][]byte, 0, (len(level)+1)/2)
	for i := 0; i < len(level); i += 2 {
		if i+1 == len(level) {
			up = append(up, level[i])
		} else {
			up = append(up, hashed(1, level[i], level[i+1]))
		}
	}
	return up
}

// rootMessage is what a batch's signature signs.
func rootMessage(root []byte) []byte {
	return []byte("rowcall receipt root " + hex.EncodeToString(root))
}

// root recomputes the root a receipt's batch path leads to, or an error if
// the path does not fit the batch's shape.
func root(r *rowcall.Receipt) ([]byte, error) {
	b := r.Batch
	if b.Size < 1 || b.Index < 0 || b.Index >= b.Size {
		return nil, fmt.Errorf("its batch index %d does not fit a batch of %d", b.Index, b.Size)
	}
	h, path := leaf(r.SHA256), b.Path
	for idx, size := b.Index, b.Size; size > 1; idx, size = idx/2, (size+1)/2 {
		if idx^1 >= size {
			continue // carried up
		}
		if len(path) == 0 {
			return nil, fmt.Errorf("its batch path is too short")
		}
		sib, err := hex.DecodeString(path[0])
		if err != nil {
			return nil, fmt.Errorf("its batch path holds %q, not a hex hash", path[0])
		}
		if path = path[1:]; idx%2 == 1 {
			h = hashed(1, sib, h)
		} else {
			h = hashed(1, h, sib)
		}
	}
	if len(path) != 0 {
		return nil, fmt.Errorf("its batch path is too long")
	}
	return h, nil
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

// ErrUnknownKey is matched (errors.Is) by Check's error for a receipt whose
// hash holds but whose key is not among the keys given: it may be intact, but
// it cannot be verified with these keys. Every other error of Check means the
// receipt was altered or forged.
var ErrUnknownKey = errors.New("ledger: signed by a key not among the keys given")

type unknownKeyError struct{ msg string }

func (e unknownKeyError) Error() string        { return e.msg }
func (e unknownKeyError) Is(target error) bool { return target == ErrUnknownKey }

// Check verifies one receipt on its own: its hash, its batch path to the
// signed root and the signature. It is the one check behind the public
// confirm, the receipt page and `rowcall receipt verify`.
func (k Keys) Check(r *rowcall.Receipt) error {
	c := r.Canonical()
	if rowcall.Fingerprint(c) != r.SHA256 {
		return fmt.Errorf("receipt seq %d (%s): its content does not match its sha256 — the receipt was altered", r.Seq, r.ID)
	}
	pub, ok := k[r.KeyID]
	if !ok {
		return unknownKeyError{fmt.Sprintf("receipt seq %d (%s): signed by key %q, which is not among the keys given", r.Seq, r.ID, r.KeyID)}
	}
	signed := c // written before batches: signed alone
	if r.Batch != nil {
		root, err := root(r)
		if err != nil {
			return fmt.Errorf("receipt seq %d (%s): %v — the receipt was altered", r.Seq, r.ID, err)
		}
		signed = rootMessage(root)
	}
	sig, err := base64.StdEncoding.DecodeString(r.Sig)
	if err != nil || !ed25519.Verify(pub, signed, sig) {
		return fmt.Errorf("receipt seq %d (%s): the signature does not verify — the receipt was altered or forged", r.Seq, r.ID)
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}
