//go:build !purego

package dot

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// dotsFMA is in dot_amd64.s: out[i] = q[0:dim8] · v[i*stride : i*stride+dim8]
// for i < n, where dim8 is a multiple of 8.
//
//go:noescape
func dotsFMA(q, v *float32, dim8, n, stride int, out *float32)

// dotsInt8FMA is in dot_amd64.s: out[i] = scales[i] × (q[0:dim8] · the
// int8 codes c[i*stride : i*stride+dim8]) for i < n.
//
//go:noescape
func dotsInt8FMA(q *float32, c *int8, dim8, n, stride int, scales, out *float32)

var haveFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// scores is Scores on one goroutine: the assembly kernel over each vector's
// first dim&^7 values, the last dim%8 added in Go.
func scores(q, vecs []float32, dim int, out []float32) {
	dim8 := dim &^ 7
	if !haveFMA || dim8 == 0 || len(out) == 0 {
		scoresGo(q, vecs, dim, out)
		return
	}
	_ = q[dim-1]
	_ = vecs[len(out)*dim-1]
	dotsFMA(unsafe.SliceData(q), unsafe.SliceData(vecs), dim8, len(out), dim, unsafe.SliceData(out))
	if dim8 == dim {
		return
	}
	for i := range out {
		v := vecs[i*dim+dim8 : (i+1)*dim]
		s := out[i]
		for j, x := range v {
			s += q[dim8+j] * x
		}
		out[i] = s
	}
}

// scoresInt8 is Int8.Scores on one goroutine.
func scoresInt8(q []float32, codes []int8, scales []float32, dim int, out []float32) {
	dim8 := dim &^ 7
	if !haveFMA || dim8 == 0 || len(out) == 0 {
		scoresInt8Go(q, codes, scales, dim, out)
		return
	}
	_ = q[dim-1]
	_ = codes[len(out)*dim-1]
	_ = scales[len(out)-1]
	dotsInt8FMA(unsafe.SliceData(q), unsafe.SliceData(codes), dim8, len(out), dim, unsafe.SliceData(scales), unsafe.SliceData(out))
	if dim8 == dim {
		return
	}
	for i := range out {
		c := codes[i*dim+dim8 : (i+1)*dim]
		var s float32
		for j, x := range c {
			s += q[dim8+j] * float32(x)
		}
		out[i] += s * scales[i]
	}
}
