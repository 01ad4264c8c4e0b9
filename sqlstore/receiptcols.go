package sqlstore

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/rowcall/rowcall"
)

// How a receipt's hashes, signature and batch are stored (migration 0016):
// as bytes, not text. A hash that is lowercase hex (every hash rowcall
// computes) is stored as its bytes (32 for a SHA-256, not 64 characters), the
// base64 signature as its 64 bytes, and the batch as batchBlob's binary form;
// anything else (a hash a tamper test wrote, a path that is not hex) is kept
// as the text it is. Reads take either form, so rows written before 0016 stay
// as they are, and a receipt reads back exactly as it was stored: every API,
// export and canonical form still sees the hex and base64 strings.

// hashArg is a hash's column value: its bytes when s is lowercase hex, s
// otherwise. The bytes are appended to *blobs and the value is their
// sub-slice, capped (what is appended after it cannot reach it).
func hashArg(blobs *[]byte, s string) any {
	if s == "" {
		return s
	}
	start := len(*blobs)
	b, ok := appendLowerHex(*blobs, s)
	if !ok {
		return s
	}
	*blobs = b
	return b[start:len(b):len(b)]
}

// receiptBlobs is how many bytes appendReceiptArgs appends to its blobs for
// r at most: its five hashes and its batch.
func receiptBlobs(r *rowcall.Receipt) int {
	n := (len(r.Input) + len(r.Output) + len(r.Contract) + len(r.Prev) + len(r.SHA256)) / 2
	if r.Batch != nil {
		n += 1 + 2*binary.MaxVarintLen64 + 32*len(r.Batch.Path)
	}
	return n
}

// sigArg is the signature's column value: its bytes when s is canonical
// base64, s otherwise.
func sigArg(s string) any {
	b, err := base64.StdEncoding.DecodeString(s)
	if s == "" || err != nil || base64.StdEncoding.EncodeToString(b) != s {
		return s
	}
	return b
}

// appendLowerHex appends the bytes s spells when s is lowercase hex of even
// length (checked and decoded in one pass); otherwise ok is false and dst is
// returned as it was.
func appendLowerHex(dst []byte, s string) (_ []byte, ok bool) {
	if len(s)%2 != 0 {
		return dst, false
	}
	n := len(dst)
	for i := 0; i < len(s); i += 2 {
		hi, lo := lowerHexValue[s[i]], lowerHexValue[s[i+1]]
		if hi|lo > 0xf {
			return dst[:n], false
		}
		dst = append(dst, hi<<4|lo)
	}
	return dst, true
}

// lowerHexValue is each byte's value as a lowercase hex digit, 0xff for a
// byte that is not one.
var lowerHexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	return t
}()

// hexCol scans a hash column: bytes become lowercase hex, text is as stored.
type hexCol struct{ s *string }

func (c hexCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.s = ""
	case []byte:
		*c.s = hex.EncodeToString(v)
	case string:
		*c.s = v
	default:
		return fmt.Errorf("a hash column holds a %T", v)
	}
	return nil
}

// sigCol scans the signature column: bytes become base64, text is as stored.
type sigCol struct{ s *string }

func (c sigCol) Scan(v any) error {
	if b, ok := v.([]byte); ok {
		*c.s = base64.StdEncoding.EncodeToString(b)
		return nil
	}
	return hexCol(c).Scan(v)
}

// The batch column's binary form: one byte saying whether the path is nil
// (batchNoPath) or a list (batchPath), the index and the size as uvarints,
// then the path's 32-byte hashes. A batch whose path is not all 64-character
// lowercase hex is stored as its JSON text instead (rare: a tamper test's).
const (
	batchNoPath = 0
	batchPath   = 1
)

// batchArg is the batch column's value; its binary form is appended to
// *blobs as hashArg's is.
func batchArg(blobs *[]byte, b *rowcall.Batch) any {
	if b == nil {
		return nil
	}
	start := len(*blobs)
	kind := byte(batchNoPath)
	if b.Path != nil {
		kind = batchPath
	}
	out := append(*blobs, kind)
	out = binary.AppendUvarint(out, uint64(b.Index))
	out = binary.AppendUvarint(out, uint64(b.Size))
	for _, h := range b.Path {
		var ok bool
		if out, ok = appendLowerHex(out, h); !ok || len(h) != 64 {
			j, _ := json.Marshal(b)
			return string(j) // *blobs as it was
		}
	}
	*blobs = out
	return out[start:len(out):len(out)]
}

// batchCol scans the batch column, binary or JSON; NULL leaves *b nil.
type batchCol struct{ b **rowcall.Batch }

func (c batchCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.b = nil
		return nil
	case string:
		*c.b = &rowcall.Batch{}
		if err := json.Unmarshal([]byte(v), *c.b); err != nil {
			return fmt.Errorf("stored batch is not JSON: %w", err)
		}
		return nil
	case []byte:
		b, err := decodeBatch(v)
		*c.b = b
		return err
	}
	return fmt.Errorf("the batch column holds a %T", v)
}

func decodeBatch(v []byte) (*rowcall.Batch, error) {
	bad := fmt.Errorf("stored batch is %d bytes of neither JSON nor its binary form", len(v))
	if len(v) == 0 || v[0] > batchPath {
		return nil, bad
	}
	index, n := binary.Uvarint(v[1:])
	if n <= 0 {
		return nil, bad
	}
	size, m := binary.Uvarint(v[1+n:])
	rest := v[1+n+m:]
	if m <= 0 || len(rest)%32 != 0 || v[0] == batchNoPath && len(rest) > 0 {
		return nil, bad
	}
	b := &rowcall.Batch{Index: int(index), Size: int(size)}
	if v[0] == batchPath {
		b.Path = make([]string, 0, len(rest)/32)
		for ; len(rest) > 0; rest = rest[32:] {
			b.Path = append(b.Path, hex.EncodeToString(rest[:32]))
		}
	}
	return b, nil
}
