//go:build !purego

package use

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/rowcall/rowcall/internal/rowgen"
)

// pinnedSum is the SHA-256 of the float32 bits of pinnedTexts' vectors,
// Embed's and EmbedBatch's, on the AVX2/FMA/F16C kernels. A change to the
// weights' storage, the loading or the products must keep it: the ranking
// (and every vector a host has stored) depends on each bit.
const pinnedSum = "7ffcffe0ebfef51c69ac50ab1d805428f3269dcb35971baff732601b4ea55a5c"

func pinnedTexts(t *testing.T) []string {
	var texts []string
	for _, c := range references(t) {
		texts = append(texts, c.Text)
	}
	texts = append(texts, "", row60)
	for _, r := range rowgen.Noise(40, 7) {
		texts = append(texts, r.Content)
	}
	return texts
}

// The vectors of fixed texts are those of the commit that pinned them, to
// the bit.
func TestEmbeddingsPinned(t *testing.T) {
	if !haveF16C {
		t.Skip("SKIPPING: the pinned vectors are the AVX2/FMA/F16C kernels'; this CPU runs the portable ones")
	}
	e := encoder(t)
	texts := pinnedTexts(t)
	h := sha256.New()
	var b [4]byte
	write := func(v []float32) {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	for _, s := range texts {
		write(e.Embed(s))
	}
	for _, v := range e.EmbedBatch(texts) {
		write(v)
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != pinnedSum {
		t.Errorf("the vectors of %d fixed texts hash to %s, want %s: a change moved the embeddings (first vector starts %v)",
			len(texts), got, pinnedSum, e.Embed(texts[0])[:4])
	}
}
