package use

import (
	"math/rand/v2"
	"testing"
)

// gemm (packed panels, the assembly micro-kernel, the zero-padded row tail
// and the goroutine split) equals the textbook triple loop.
func TestGemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][3]int{{1, 7, 16}, {3, 5, 32}, {4, 64, 48}, {13, 33, 160}, {130, 512, 1536}} {
		m, k, n := sz[0], sz[1], sz[2]
		a, w, bias := make([]float32, m*k), make([]float32, k*n), make([]float32, n)
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range w {
			w[i] = rng.Float32()*2 - 1
		}
		for i := range bias {
			bias[i] = rng.Float32()
		}
		mat, err := newMatrix(w, k, n)
		if err != nil {
			t.Fatal(err)
		}
		c := make([]float32, m*n)
		for i := range c {
			c[i] = 1
		}
		mat.mul(c, a, m, bias, true)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				want := float64(1 + bias[j])
				for l := 0; l < k; l++ {
					want += float64(a[i*k+l]) * float64(w[l*n+j])
				}
				if d := float64(c[i*n+j]) - want; d > 1e-3 || d < -1e-3 {
					t.Fatalf("%dx%dx%d: c[%d][%d] = %g, want %g", m, k, n, i, j, c[i*n+j], want)
				}
			}
		}
	}
}

// BenchmarkGemm is the FFN's first product for a 128-token batch; "GMAC/s"
// is multiply-adds per second of wall time.
func BenchmarkGemm(b *testing.B) {
	const m, k, n = 128, 512, 1536
	mat, _ := newMatrix(make([]float32, k*n), k, n)
	a, c := make([]float32, m*k), make([]float32, m*n)
	for i := range a {
		a[i] = 1
	}
	defer func() { b.ReportMetric(float64(m*k*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s") }()
	defer cpuTime(b)()
	for b.Loop() {
		mat.mul(c, a, m, nil, false)
	}
}
