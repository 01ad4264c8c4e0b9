package use

import (
	"fmt"
	"runtime"
	"sync"
)

// The dense layers' matrix products, blocked for the cache and vectorised:
// each weight matrix is packed once, at Load, into 16-column panels
// ([k][16] contiguous) of half-precision values (binary16: half the bytes to
// read, which is what bounds a short query's products; the JavaScript
// model's vectors still match to 1 - 5e-7), and a 6-row by 16-column
// micro-kernel (AVX2/FMA/F16C assembly on amd64, plain Go elsewhere) keeps its
// tile of C in registers, widening the weights as it loads them. Attention's
// products (keys and values packed per text) use the same loops over float32
// panels. Large products split their panels across up to cores goroutines
// (GOMAXPROCS when cores is 0).

const (
	panelWidth = 16
	tileRows   = 6       // rows of a tile (a 6x16 tile of C fills twelve AVX registers)
	smallRows  = 24      // below this many rows, tiles of 4 (a query's 8 tokens waste no padded rows)
	rowBlock   = 60      // activation rows per pass over the panels, a multiple of 4 and 6 (60 x 1536 x 4 B = 360 KB)
	depthBlock = 256     // panel rows per pass of a row block (256 x 16 x 2 B = 8 KB of L1)
	parallelAt = 1 << 21 // multiply-adds from which a product is split across goroutines
)

// matrix is a weight matrix [k, n], packed into n/16 panels.
type matrix struct {
	k, n   int
	packed []uint16 // panel p is packed[p*16*k : (p+1)*16*k], row-major [k][16], binary16
}

// packMatrix packs the k x n matrix whose element (r, c) is at(r*n + c),
// rounded to half precision.
func packMatrix(at func(int) float32, k, n int) (matrix, error) {
	if n%panelWidth != 0 {
		return matrix{}, fmt.Errorf("use: a %dx%d weight matrix does not pack into %d-column panels", k, n, panelWidth)
	}
	m := matrix{k: k, n: n, packed: make([]uint16, k*n)}
	for p := 0; p < n/panelWidth; p++ {
		dst := m.packed[p*panelWidth*k:]
		for r := 0; r < k; r++ {
			for j := range panelWidth {
				dst[r*panelWidth+j] = toHalf(at(r*n + p*panelWidth + j))
			}
		}
	}
	return m, nil
}

// mul sets c[rows, n] = a[rows, k] @ m + bias (bias nil for none) or, with
// accumulate, adds a @ m + bias to c, on up to cores goroutines (0: GOMAXPROCS).
func (m matrix) mul(c, a []float32, rows int, bias []float32, accumulate bool, cores int) {
	k, n := m.k, m.n
	c, a = c[:rows*n], a[:rows*k]
	switch {
	case !accumulate && bias == nil:
		clear(c)
	case !accumulate:
		for r := 0; r < rows; r++ {
			copy(c[r*n:(r+1)*n], bias)
		}
	case bias != nil:
		for r := 0; r < rows; r++ {
			cr := c[r*n : (r+1)*n]
			for j, b := range bias {
				cr[j] += b
			}
		}
	}
	gemmOf(c, n, a, k, rows, k, m.packed, n/panelWidth, tileHalf, cores)
}

// pack writes the k x (16*panels) matrix whose element (l, j) is
// src[l*ls + j*js] into panels (zero past n columns), the layout gemm reads.
func pack(dst, src []float32, k, n, ls, js int) {
	panels := (n + panelWidth - 1) / panelWidth
	dst = dst[:panels*panelWidth*k]
	for p := 0; p < panels; p++ {
		d := dst[p*panelWidth*k : (p+1)*panelWidth*k]
		for l := 0; l < k; l++ {
			dl := d[l*panelWidth : (l+1)*panelWidth]
			for j := range dl {
				if col := p*panelWidth + j; col < n {
					dl[j] = src[l*ls+col*js]
				} else {
					dl[j] = 0
				}
			}
		}
	}
}

// gemm adds a @ B to c, where a is rows x k (row stride lda), B is k x
// (16*panels) packed by pack or newMatrix, and c has row stride ldc and at
// least 16*panels columns, on up to cores goroutines (0: GOMAXPROCS).
func gemm(c []float32, ldc int, a []float32, lda, rows, k int, packed []float32, panels int, cores int) {
	gemmOf(c, ldc, a, lda, rows, k, packed, panels, tile, cores)
}

// gemmOf is gemm over panels of float32 or of float16 (uint16 bits), with
// the micro-kernel for them (tile or tileHalf).
func gemmOf[E float32 | uint16](c []float32, ldc int, a []float32, lda, rows, k int, packed []E, panels int,
	tile func(tr, k int, a []float32, lda int, panel []E, c []float32, ldc int), cores int) {
	if rows == 0 || k == 0 || panels == 0 {
		return
	}
	panel := func(p int) []E { return packed[p*panelWidth*k : (p+1)*panelWidth*k] }
	tr := tileRows
	if rows < smallRows {
		tr = 4
	}
	// The last rows%tr rows run as one zero-padded tile.
	full := rows - rows%tr
	var tail []float32
	if full < rows {
		tail = make([]float32, tr*k)
		for r := full; r < rows; r++ {
			copy(tail[(r-full)*k:(r-full+1)*k], a[r*lda:r*lda+k])
		}
	}
	work := func(p0, p1 int) {
		for r0 := 0; r0 < full; r0 += rowBlock {
			r1 := min(r0+rowBlock, full)
			for p := p0; p < p1; p++ {
				pn := panel(p)
				// k in slices of depthBlock, so the slice of the panel the
				// tiles share (8 KB of halves, 16 KB of float32) stays in L1.
				for l0 := 0; l0 < k; l0 += depthBlock {
					kl := min(depthBlock, k-l0)
					for r := r0; r < r1; r += tr {
						tile(tr, kl, a[r*lda+l0:], lda, pn[l0*panelWidth:], c[r*ldc+p*panelWidth:], ldc)
					}
				}
			}
		}
		if tail == nil {
			return
		}
		var buf [tileRows * panelWidth]float32
		ct := buf[:tr*panelWidth]
		for p := p0; p < p1; p++ {
			clear(ct)
			for r := full; r < rows; r++ {
				copy(ct[(r-full)*panelWidth:(r-full+1)*panelWidth], c[r*ldc+p*panelWidth:])
			}
			pn := panel(p)
			for l0 := 0; l0 < k; l0 += depthBlock { // as above, so a row's sums do not depend on its place
				tile(tr, min(depthBlock, k-l0), tail[l0:], k, pn[l0*panelWidth:], ct, panelWidth)
			}
			for r := full; r < rows; r++ {
				copy(c[r*ldc+p*panelWidth:r*ldc+(p+1)*panelWidth], ct[(r-full)*panelWidth:])
			}
		}
	}
	if cores <= 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	workers := min(cores, panels)
	if workers < 2 || rows*k*panels*panelWidth < parallelAt {
		work(0, panels)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		p0, p1 := w*panels/workers, (w+1)*panels/workers
		wg.Go(func() { work(p0, p1) })
	}
	wg.Wait()
}

// tileGo is the portable micro-kernel: c[r][0:16] += a[r*lda:r*lda+k] @ panel for r < tr.
func tileGo(tr, k int, a []float32, lda int, panel []float32, c []float32, ldc int) {
	for r := 0; r < tr; r++ {
		var acc [panelWidth]float32
		ar := a[r*lda : r*lda+k]
		for l, x := range ar {
			b := panel[l*panelWidth : (l+1)*panelWidth]
			for j := range acc {
				acc[j] += x * b[j]
			}
		}
		cr := c[r*ldc : r*ldc+panelWidth]
		for j := range cr {
			cr[j] += acc[j]
		}
	}
}
