package vectors

import (
	"math"

	"github.com/rowcall/rowcall"
)

// Centroider is an index that knows the mean of its vectors (Memory and
// Table do): Ranker.Hub takes a row's likeness to it off the row's cosine.
type Centroider interface {
	Centroid(model rowcall.EmbedModel) []float32
}

// unhub is the query vector q − hub × c: its dot product with a row's
// vector is the row's cosine with q less hub × its cosine with the
// directory's centroid c, so a row near every row (and so near every
// question) gains less from being near this one.
func unhub(q, c []float32, hub float64) []float32 {
	out := make([]float32, len(q))
	for i := range q {
		out[i] = q[i]
		if i < len(c) {
			out[i] -= float32(hub) * c[i]
		}
	}
	return out
}

// normalise scales v to unit length (a zero vector stays zero).
func normalise(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	n := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= n
	}
}
