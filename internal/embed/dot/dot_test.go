package dot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naive is the textbook loop in float64.
func naive(q, vecs []float32, dim int, out []float64) {
	for i := range out {
		var s float64
		for j := 0; j < dim; j++ {
			s += float64(q[j]) * float64(vecs[i*dim+j])
		}
		out[i] = s
	}
}

func random(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

// checkScores holds Scores to the float64 loop: within float32 rounding of a
// dim-term sum (each term at most 1 in size), and it never writes past out.
func checkScores(t *testing.T, q, vecs []float32, dim, n int) {
	t.Helper()
	out := make([]float32, n+1)
	out[n] = 42 // a guard past the end
	Scores(q, vecs, dim, out[:n])
	want := make([]float64, n)
	naive(q, vecs, dim, want)
	tol := 1e-6 * float64(dim+1)
	for i := range want {
		if d := math.Abs(float64(out[i]) - want[i]); d > tol {
			t.Fatalf("dim %d, %d vectors: score %d = %g, want %g (off by %g, tolerance %g)", dim, n, i, out[i], want[i], d, tol)
		}
	}
	if out[n] != 42 {
		t.Fatalf("dim %d, %d vectors: Scores wrote past out", dim, n)
	}
}

// The kernel (assembly on amd64, its Go tail for dim%8, and the goroutine
// split) equals the plain loop, on odd sizes and on the index's.
func TestScoresMatchLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	for _, dim := range []int{1, 3, 7, 8, 9, 15, 16, 31, 32, 33, 63, 100, 127, 511, 512, 513, 768, 1024} {
		for _, n := range []int{0, 1, 2, 5, 33} {
			checkScores(t, random(rng, dim), random(rng, n*dim), dim, n)
		}
	}
	// Large enough to be split across goroutines (parallelAt), with an
	// uneven share per worker.
	for _, sz := range [][2]int{{512, 3001}, {33, parallelAt/33 + 7}} {
		checkScores(t, random(rng, sz[0]), random(rng, sz[0]*sz[1]), sz[0], sz[1])
	}
}

// Scores reads only the first dim values of q and the first len(out)·dim of
// vecs, whatever lies beyond.
func TestScoresIgnoresExtra(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 2))
	const dim, n = 40, 6
	q, vecs := random(rng, dim+5), random(rng, (n+2)*dim)
	a := make([]float32, n)
	Scores(q, vecs, dim, a)
	b := make([]float32, n)
	Scores(q[:dim], vecs[:n*dim], dim, b)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("score %d: %g with extra values around, %g without", i, a[i], b[i])
		}
	}
}

func FuzzScores(f *testing.F) {
	f.Add(uint64(1), uint16(512), uint8(3))
	f.Add(uint64(2), uint16(13), uint8(40))
	f.Add(uint64(3), uint16(1), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, dim uint16, n uint8) {
		d := int(dim%2048) + 1
		rng := rand.New(rand.NewPCG(seed, uint64(d)))
		checkScores(t, random(rng, d), random(rng, int(n)*d), d, int(n))
	})
}

// BenchmarkScores scans 10,000 and 100,000 vectors of 512 (an index of that
// many rows): "plain" is the earlier plain-Go loop on one goroutine, "kernel"
// is Scores. GB/s is the vectors' bytes read per second of wall time.
func BenchmarkScores(b *testing.B) {
	rng := rand.New(rand.NewPCG(17, 3))
	const dim = 512
	for _, n := range []int{10_000, 100_000} {
		q, vecs, out := random(rng, dim), random(rng, n*dim), make([]float32, n)
		for _, k := range []struct {
			name string
			fn   func(q, vecs []float32, dim int, out []float32)
		}{{"plain", scoresGo}, {"kernel", Scores}} {
			b.Run(fmt.Sprintf("%s/%dk", k.name, n/1000), func(b *testing.B) {
				b.SetBytes(int64(n * dim * 4))
				for b.Loop() {
					k.fn(q, vecs, dim, out)
				}
			})
		}
	}
}
