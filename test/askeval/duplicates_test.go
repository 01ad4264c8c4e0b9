package askeval

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rowcall/rowcall"
)

// TestDuplicateThreshold holds rowcall.NearDuplicate to what it was chosen on: no
// two distinct targets are that near, and at least 11 of the 12 paraphrases
// are at least that near their original (and nearest it).
//
//	ROWCALL_ASKEVAL=1 go test ./test/askeval -run TestDuplicateThreshold -v
func TestDuplicateThreshold(t *testing.T) {
	enc := withEncoder(t)
	rows := Targets()
	texts := make([]string, len(rows))
	for i := range rows {
		texts[i] = rowcall.EmbedText(&rows[i])
	}
	vecs := enc.EmbedBatch(texts)
	dot := func(a, b []float32) float64 {
		s := 0.0
		for i := range a {
			s += float64(a[i] * b[i])
		}
		return s
	}
	var nearest []float64
	for i := range vecs {
		m := -1.0
		for j := range vecs {
			if i != j {
				m = max(m, dot(vecs[i], vecs[j]))
			}
		}
		nearest = append(nearest, m)
		if m >= rowcall.NearDuplicate {
			t.Errorf("%s is %.3f near another target (threshold %.2f)", rows[i].Key, m, rowcall.NearDuplicate)
		}
	}
	slices.Sort(nearest)
	n := len(nearest)
	t.Logf("distinct targets, cosine to the nearest other: p50 %.3f p90 %.3f max %.3f", nearest[n/2], nearest[n*9/10], nearest[n-1])
	flagged := 0
	var got []string
	for i, p := range Paraphrases {
		v := enc.Embed(p)
		c := dot(v, vecs[i*10])
		best := -1.0
		for j := range vecs {
			if j != i*10 {
				best = max(best, dot(v, vecs[j]))
			}
		}
		if c >= rowcall.NearDuplicate && c > best {
			flagged++
		}
		got = append(got, fmt.Sprintf("%.3f", c))
	}
	slices.Sort(got)
	t.Logf("paraphrases, cosine to their original: %v; %d of %d flagged", got, flagged, len(Paraphrases))
	if flagged < 11 {
		t.Errorf("only %d of %d paraphrases are flagged", flagged, len(Paraphrases))
	}
}
