// Package dot scores a query vector against many stored vectors at once: the
// kernel under every in-memory vector index (the vectors are L2-normalised,
// so a dot product is the cosine).
//
//	out := make([]float32, len(vecs)/dim)
//	dot.Scores(q, vecs, dim, out) // out[i] = q · vecs[i*dim:(i+1)*dim]
//
// On amd64 with AVX2 and FMA the products run in an assembly kernel (eight
// lanes, four accumulators); elsewhere, or built with -tags purego, in plain
// Go. A large scan (from about 1,000 vectors of 512) is split across
// GOMAXPROCS goroutines. The kernel's sums are associated differently from
// the plain loop's, so scores agree to float32 rounding, not bit for bit.
package dot

import (
	"runtime"
	"sync"
)

// parallelAt is the number of multiply-adds (vectors × dim) from which a scan
// is split across goroutines: about 1,000 vectors of 512, some 30 µs of work
// on one core, well above the cost of starting a goroutine.
const parallelAt = 1 << 19

// Scores sets out[i] to the dot product of q (len dim) with the i-th vector of
// vecs (len(out)·dim values, row after row).
func Scores(q, vecs []float32, dim int, out []float32) {
	n := len(out)
	q = q[:dim:dim]
	vecs = vecs[: n*dim : n*dim]
	workers := min(runtime.GOMAXPROCS(0), n*dim/parallelAt)
	if workers < 2 {
		scores(q, vecs, dim, out)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		i0, i1 := w*n/workers, (w+1)*n/workers
		wg.Go(func() { scores(q, vecs[i0*dim:i1*dim], dim, out[i0:i1]) })
	}
	wg.Wait()
}

// scoresGo is the portable kernel (and the reference the tests hold the
// assembly to).
func scoresGo(q, vecs []float32, dim int, out []float32) {
	q = q[:dim:dim]
	for i := range out {
		v := vecs[i*dim : (i+1)*dim : (i+1)*dim]
		var s0, s1, s2, s3 float32
		j := 0
		for ; j+4 <= dim; j += 4 {
			s0 += q[j] * v[j]
			s1 += q[j+1] * v[j+1]
			s2 += q[j+2] * v[j+2]
			s3 += q[j+3] * v[j+3]
		}
		for ; j < dim; j++ {
			s0 += q[j] * v[j]
		}
		out[i] = s0 + s1 + s2 + s3
	}
}
