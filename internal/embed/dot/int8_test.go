package dot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func unit(rng *rand.Rand, dim int) []float32 {
	v := random(rng, dim)
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(s))
	}
	return v
}

// checkInt8 holds Int8.Scores to the float64 loop over the dequantised codes
// (the kernel's own arithmetic) and, for unit vectors, to the float32
// vectors' scores within the quantisation's bound.
func checkInt8(t *testing.T, rng *rand.Rand, dim, n int) {
	t.Helper()
	q := unit(rng, dim)
	x := Int8{Dim: dim}
	vecs := make([]float32, 0, n*dim)
	for range n {
		v := unit(rng, dim)
		vecs = append(vecs, v...)
		x.Append(v)
	}
	out := make([]float32, n+1)
	out[n] = 42
	x.Scores(q, out[:n], 0)
	if out[n] != 42 {
		t.Fatalf("dim %d, %d vectors: Int8.Scores wrote past out", dim, n)
	}
	one := make([]float32, n) // on one goroutine: the same scores
	x.Scores(q, one, 1)
	if !slices.Equal(one, out[:n]) {
		t.Fatalf("dim %d, %d vectors: Int8.Scores on one core differs from the split scan", dim, n)
	}
	exact := make([]float64, n)
	naive(q, vecs, dim, exact)
	for i := range n {
		var deq float64
		for j := range dim {
			deq += float64(q[j]) * float64(x.Codes[i*dim+j]) * float64(x.Scales[i])
		}
		if d := math.Abs(float64(out[i]) - deq); d > 1e-5*float64(dim+1) {
			t.Fatalf("dim %d, %d vectors: score %d = %g, the codes' exact dot %g", dim, n, i, out[i], deq)
		}
		// Each value is off by at most scale/2, so the score by at most
		// scale/2 · Σ|q| ≤ scale/2 · √dim for a unit q.
		bound := float64(x.Scales[i])/2*math.Sqrt(float64(dim)) + 1e-5
		if d := math.Abs(float64(out[i]) - exact[i]); d > bound {
			t.Fatalf("dim %d, %d vectors: score %d = %g, float32's %g (off by %g, bound %g)", dim, n, i, out[i], exact[i], d, bound)
		}
	}
}

func TestInt8MatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	for _, dim := range []int{1, 3, 7, 8, 9, 31, 32, 33, 100, 511, 512, 513} {
		for _, n := range []int{0, 1, 5, 33} {
			checkInt8(t, rng, dim, n)
		}
	}
	checkInt8(t, rng, 512, 3001) // split across goroutines
}

// Set re-quantises one vector in place; a zero vector scores zero.
func TestInt8Set(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 5))
	const dim = 24
	x := Int8{Dim: dim}
	a, b := unit(rng, dim), unit(rng, dim)
	x.Append(a)
	x.Append(a)
	x.Set(1, b)
	x.Append(make([]float32, dim))
	var y Int8
	y.Dim = dim
	y.Append(b)
	out, want := make([]float32, 3), make([]float32, 1)
	x.Scores(a, out, 0)
	y.Scores(a, want, 0)
	if out[1] != want[0] || out[2] != 0 {
		t.Fatalf("after Set: scores %v, want [_ %g 0]", out, want[0])
	}
}

func FuzzInt8Scores(f *testing.F) {
	f.Add(uint64(1), uint16(512), uint8(3))
	f.Add(uint64(2), uint16(13), uint8(40))
	f.Fuzz(func(t *testing.T, seed uint64, dim uint16, n uint8) {
		d := int(dim%2048) + 1
		checkInt8(t, rand.New(rand.NewPCG(seed, uint64(d))), d, int(n))
	})
}

// BenchmarkInt8Scores is BenchmarkScores's scan over int8 codes; GB/s counts
// the float32 vectors' bytes (the same work), so it compares directly.
func BenchmarkInt8Scores(b *testing.B) {
	rng := rand.New(rand.NewPCG(17, 3))
	const dim = 512
	for _, n := range []int{10_000, 100_000} {
		x := Int8{Dim: dim}
		for range n {
			x.Append(random(rng, dim))
		}
		q, out := random(rng, dim), make([]float32, n)
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			b.SetBytes(int64(n * dim * 4))
			for b.Loop() {
				x.Scores(q, out, 0)
			}
		})
	}
}
