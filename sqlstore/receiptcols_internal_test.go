package sqlstore

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

// lowerHexRE is what a hash must be to be stored as bytes: lowercase hex, an
// even number of digits.
var lowerHexRE = regexp.MustCompile(`^(?:[0-9a-f]{2})+$`)

// FuzzHashArg: a hash is stored as the bytes it spells exactly when it is
// lowercase hex of even length, and as its own text otherwise (upper case,
// odd length, anything else), so it reads back as it was (hexCol).
func FuzzHashArg(f *testing.F) {
	for _, s := range []string{"", "ab", "abc", "ABCD", "0f1e", "zz", "a\x00", strings.Repeat("9f", 32), "é1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		blobs := []byte("before")
		got := hashArg(&blobs, s)
		if lowerHexRE.MatchString(s) {
			want, _ := hex.DecodeString(s)
			if b, ok := got.([]byte); !ok || !bytes.Equal(b, want) || string(blobs) != "before"+string(want) {
				t.Fatalf("hashArg(%q) = %#v (blobs %q), want its bytes %x", s, got, blobs, want)
			}
		} else if got != any(s) || string(blobs) != "before" {
			t.Fatalf("hashArg(%q) = %#v (blobs %q), want the text itself", s, got, blobs)
		}
		var back string
		if err := (hexCol{&back}).Scan(got); err != nil || back != s {
			t.Fatalf("%q reads back as %q, %v", s, back, err)
		}
	})
}

// TestBatchArgKeepsEachPath: a batch whose path is all 64-digit lowercase hex
// is stored in its binary form, anything else (one element upper case, short,
// long, not hex) as its JSON; both read back as the batch itself.
func TestBatchArgKeepsEachPath(t *testing.T) {
	h := func(c string) string { return strings.Repeat(c, 64) }
	for _, c := range []struct {
		b      *rowcall.Batch
		binary bool
	}{
		{&rowcall.Batch{Index: 3, Size: 28, Path: []string{h("a"), h("0"), h("f")}}, true},
		{&rowcall.Batch{Index: 0, Size: 1}, true},
		{&rowcall.Batch{Index: 0, Size: 1, Path: []string{}}, true},
		{&rowcall.Batch{Index: 300, Size: 301, Path: []string{h("1"), strings.Repeat("ab", 32)}}, true},
		{&rowcall.Batch{Index: 1, Size: 2, Path: []string{h("a"), h("A")}}, false},
		{&rowcall.Batch{Index: 1, Size: 2, Path: []string{h("a")[:62]}}, false},
		{&rowcall.Batch{Index: 1, Size: 2, Path: []string{h("a") + "00"}}, false},
		{&rowcall.Batch{Index: 1, Size: 2, Path: []string{h("a"), h("g")}}, false},
		{&rowcall.Batch{Index: 1, Size: 2, Path: []string{""}}, false},
	} {
		blobs := make([]byte, 0, 4) // grows: values made before must keep their bytes
		before := hashArg(&blobs, h("e"))
		v := batchArg(&blobs, c.b)
		after := hashArg(&blobs, h("7"))
		if !bytes.Equal(before.([]byte), bytes.Repeat([]byte{0xee}, 32)) || !bytes.Equal(after.([]byte), bytes.Repeat([]byte{0x77}, 32)) {
			t.Errorf("%+v: the hashes beside it changed: %x %x", c.b, before, after)
		}
		if _, isBinary := v.([]byte); isBinary != c.binary {
			t.Errorf("%+v stored as %T, want binary %v", c.b, v, c.binary)
		}
		if s, ok := v.(string); ok {
			if j, _ := json.Marshal(c.b); s != string(j) {
				t.Errorf("%+v stored as %s, want %s", c.b, s, j)
			}
		}
		var back *rowcall.Batch
		if err := (batchCol{&back}).Scan(v); err != nil || !reflect.DeepEqual(back, c.b) {
			t.Errorf("%+v reads back as %+v, %v", c.b, back, err)
		}
	}
	if batchArg(new([]byte), nil) != nil {
		t.Error("a nil batch is not NULL")
	}
}
