package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/rowcall/rowcall"
)

// Checkpoint is a signed head of the receipt chain, in the C2SP checkpoint
// form (https://c2sp.org/tlog-checkpoint): a signed note
// (https://c2sp.org/signed-note) whose text is three lines,
//
//	<origin>
//	<size>
//	<root>
//
// signed by the receipt signing key under the origin as the note key name
// (its key hash is the first 4 bytes of SHA-256(origin ‖ "\n" ‖ 0x01 ‖
// public key), as signed-note defines for Ed25519). Size is the newest
// receipt's seq, which is the number of receipts in the chain. Root is the
// base64 of that receipt's sha256, not an RFC 6962 tree over every receipt:
// each receipt's hash covers its prev_sha256, so the newest one commits to
// the whole chain before it, and a later chain is consistent with the
// checkpoint exactly when its receipt at seq Size has that hash. An empty
// chain's root is SHA-256 of nothing (RFC 6962's empty tree).
//
// A saved checkpoint is what makes a truncated chain visible: deleting the
// newest receipts leaves a chain that verifies by itself, but not one that
// reaches a checkpoint saved before (see Match).
type Checkpoint struct {
	Origin string // the chain's name, e.g. "rowcall.example.com/receipts"
	Size   int64  // the newest receipt's seq (0: no receipts yet)
	Head   string // the newest receipt's sha256, hex ("" when Size is 0)
}

// emptyRoot is the root line of an empty chain.
var emptyRoot = sha256.Sum256(nil)

// text is the checkpoint's note text.
func (c Checkpoint) text(extra ...string) (string, error) {
	root := emptyRoot[:]
	if c.Size > 0 {
		b, err := hex.DecodeString(c.Head)
		if err != nil || len(b) != sha256.Size {
			return "", fmt.Errorf("ledger: checkpoint head %q is not a hex SHA-256", c.Head)
		}
		root = b
	}
	text := c.Origin + "\n" + strconv.FormatInt(c.Size, 10) + "\n" + base64.StdEncoding.EncodeToString(root) + "\n"
	for _, l := range extra { // C2SP's extension lines
		if l == "" || strings.Contains(l, "\n") {
			return "", fmt.Errorf("ledger: checkpoint extension line %q is empty or holds a newline", l)
		}
		text += l + "\n"
	}
	return text, nil
}

// SignCheckpoint returns c as a signed note.
func (s *Signer) SignCheckpoint(c Checkpoint) ([]byte, error) { return s.signCheckpoint(c) }

func (s *Signer) signCheckpoint(c Checkpoint, extra ...string) ([]byte, error) {
	text, err := c.text(extra...)
	if err != nil {
		return nil, err
	}
	key, _ := s.private()
	v, err := noteVerifier(c.Origin, key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	return note.Sign(&note.Note{Text: text}, noteSigner{v, key})
}

// noteSigner signs a note with the receipt key, under the name and key hash
// of its verifier.
type noteSigner struct {
	note.Verifier
	key ed25519.PrivateKey
}

func (n noteSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(n.key, msg), nil }

// noteVerifier is the signed-note verifier for pub under name.
func noteVerifier(name string, pub ed25519.PublicKey) (note.Verifier, error) {
	vkey, err := note.NewEd25519VerifierKey(name, pub)
	if err != nil {
		return nil, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("ledger: %q cannot name a checkpoint (no spaces or '+'): %w", name, err)
	}
	return v, nil
}

// OpenCheckpoint reads a signed checkpoint and checks that one of k signed it.
func (k Keys) OpenCheckpoint(signed []byte) (Checkpoint, error) {
	c, _, err := k.openCheckpoint(signed)
	return c, err
}

// openCheckpoint is OpenCheckpoint that also returns the extension lines.
func (k Keys) openCheckpoint(signed []byte) (Checkpoint, []string, error) {
	origin, _, _ := bytes.Cut(signed, []byte("\n"))
	var list []note.Verifier
	for _, pub := range k {
		if v, err := noteVerifier(string(origin), pub); err == nil {
			list = append(list, v)
		}
	}
	n, err := note.Open(signed, note.VerifierList(list...))
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		return Checkpoint{}, nil, errors.New("the checkpoint is not signed by any of the keys given")
	case errors.As(err, &invalid):
		return Checkpoint{}, nil, errors.New("the checkpoint's signature does not verify — the checkpoint was altered or forged")
	case err != nil:
		return Checkpoint{}, nil, fmt.Errorf("this is not a signed checkpoint (%v)", err)
	}
	lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
	if len(lines) < 3 {
		return Checkpoint{}, nil, errors.New("the checkpoint has fewer than three lines (origin, size, root)")
	}
	c := Checkpoint{Origin: lines[0]}
	if c.Size, err = strconv.ParseInt(lines[1], 10, 64); err != nil || c.Size < 0 {
		return Checkpoint{}, nil, fmt.Errorf("the checkpoint's size %q is not a count", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != sha256.Size {
		return Checkpoint{}, nil, fmt.Errorf("the checkpoint's root %q is not a base64 SHA-256", lines[2])
	}
	if c.Size > 0 {
		c.Head = hex.EncodeToString(root)
	}
	return c, lines[3:], nil
}

// Match checks that chain (in seq order, as Verify checks it) is consistent
// with c: it reaches seq c.Size and its receipt there is the one c names.
// Verify the chain's links as well; Match looks only at the checkpoint's seq.
func (c Checkpoint) Match(chain []rowcall.Receipt) error {
	if c.Size == 0 {
		return nil
	}
	if len(chain) == 0 || chain[len(chain)-1].Seq < c.Size {
		end := int64(0)
		if len(chain) > 0 {
			end = chain[len(chain)-1].Seq
		}
		return fmt.Errorf("the chain ends at seq %d, but the checkpoint was signed at seq %d — %d receipt(s) are missing from its end: the chain was truncated",
			end, c.Size, c.Size-end)
	}
	if first := chain[0].Seq; first > c.Size {
		return fmt.Errorf("the chain starts at seq %d, after the checkpoint's seq %d: export the whole chain to check it against the checkpoint", first, c.Size)
	}
	var r *rowcall.Receipt
	for i := range chain {
		if chain[i].Seq == c.Size {
			r = &chain[i]
			break
		}
	}
	if r == nil {
		return fmt.Errorf("the chain has no receipt at the checkpoint's seq %d", c.Size)
	}
	if r.SHA256 != c.Head {
		return fmt.Errorf("receipt seq %d (%s): its sha256 %s is not the checkpoint's %s — the chain forks from the checkpoint (history was rewritten)",
			r.Seq, r.ID, short(r.SHA256), short(c.Head))
	}
	return nil
}
