package sqlstore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

// The batch column's hand-written JSON is json.Marshal's, byte for byte,
// whatever the batch holds (a verifier reads it back with any JSON library).
func TestBatchJSONIsMarshal(t *testing.T) {
	h := strings.Repeat("0f", 32)
	for _, b := range []*rowcall.Batch{
		{Index: 0, Size: 1},
		{Index: 0, Size: 1, Path: []string{}},
		{Index: 3, Size: 7, Path: []string{h, strings.ToUpper(h), h}},
		{Index: 1, Size: 2, Path: []string{`not "hex" <&>`}},
		{Index: -1, Size: 1 << 40, Path: []string{"é\n"}},
	} {
		want, _ := json.Marshal(b)
		if got := batchJSON(b); got != string(want) {
			t.Errorf("batchJSON(%+v) = %s, json.Marshal %s", b, got, want)
		}
	}
	if batchJSON(nil) != nil {
		t.Error("no batch is not NULL")
	}
}
