package use

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// gemm (packed half-precision panels, the assembly micro-kernel, the
// zero-padded row tail, the depth slices and the goroutine split) equals the
// textbook triple loop.
func TestGemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][3]int{{1, 7, 16}, {3, 5, 32}, {4, 64, 48}, {13, 33, 160}, {9, 700, 32}, {25, 40, 32}, {31, 260, 48}, {130, 512, 1536}} {
		m, k, n := sz[0], sz[1], sz[2]
		a, w, bias := make([]float32, m*k), make([]float32, k*n), make([]float32, n)
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range w {
			w[i] = rng.Float32()*2 - 1
		}
		// The weights are packed in half precision: the product to equal is
		// the one of the rounded weights.
		wh := make([]float32, len(w))
		for i, x := range w {
			wh[i] = fromHalf(toHalf(x))
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
		mat.mul(c, a, m, bias, true, 0)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				want := float64(1 + bias[j])
				for l := 0; l < k; l++ {
					want += float64(a[i*k+l]) * float64(wh[l*n+j])
				}
				if d := float64(c[i*n+j]) - want; d > 1e-3 || d < -1e-3 {
					t.Fatalf("%dx%dx%d: c[%d][%d] = %g, want %g", m, k, n, i, j, c[i*n+j], want)
				}
			}
		}
	}
}

// The float32 panels (attention's keys and values) through the same loops
// equal the triple loop too.
func TestGemmFloat32Panels(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sz := range [][3]int{{1, 7, 16}, {6, 300, 40}, {29, 300, 40}, {130, 512, 64}} {
		m, k, n := sz[0], sz[1], sz[2]
		a, w := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range w {
			w[i] = rng.Float32()*2 - 1
		}
		panels := (n + panelWidth - 1) / panelWidth
		packed := make([]float32, panels*panelWidth*k)
		pack(packed, w, k, n, n, 1)
		c := make([]float32, m*panels*panelWidth)
		gemm(c, panels*panelWidth, a, k, m, k, packed, panels, 0)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var want float64
				for l := 0; l < k; l++ {
					want += float64(a[i*k+l]) * float64(w[l*n+j])
				}
				if d := float64(c[i*panels*panelWidth+j]) - want; d > 1e-3 || d < -1e-3 {
					t.Fatalf("%dx%dx%d: c[%d][%d] = %g, want %g", m, k, n, i, j, c[i*panels*panelWidth+j], want)
				}
			}
		}
	}
}

// toHalf rounds to the nearest binary16 (ties to even), fromHalf is exact:
// every half survives the round trip, and a float32 lands on the nearer of
// the two halves around it.
func TestHalf(t *testing.T) {
	for h := range 1 << 16 {
		f := fromHalf(uint16(h))
		if f != f { // NaN
			if g := toHalf(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("toHalf(NaN) = %#04x, not a NaN", g)
			}
			continue
		}
		if g := toHalf(f); g != uint16(h) {
			t.Fatalf("toHalf(fromHalf(%#04x) = %g) = %#04x", h, f, g)
		}
	}
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00},
		{1.0 / (1 << 24), 0x0001}, {1.0 / (1 << 25), 0x0000}, {1.5 / (1 << 24), 0x0002},
		{1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02}, {0.1, 0x2e66}, {6.1035156e-05, 0x0400},
	} {
		if got := toHalf(c.f); got != c.want {
			t.Errorf("toHalf(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 100000 {
		f := float32(rng.NormFloat64() * 0.1)
		h := toHalf(f)
		got := float64(fromHalf(h))
		for _, n := range []uint16{h - 1, h + 1} {
			if alt := float64(fromHalf(n)); math.Abs(alt-float64(f)) < math.Abs(got-float64(f)) {
				t.Fatalf("toHalf(%g) = %g, but %g is nearer", f, got, alt)
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
		mat.mul(c, a, m, nil, false, 0)
	}
}

// newMatrix packs w, a k x n matrix in row-major order, as Load packs a
// weight.
func newMatrix(w []float32, k, n int) (matrix, error) {
	if len(w) != k*n {
		return matrix{}, fmt.Errorf("use: a %dx%d weight matrix has %d values", k, n, len(w))
	}
	return packMatrix(func(i int) float32 { return w[i] }, k, n)
}
