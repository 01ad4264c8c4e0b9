//go:build !purego

package use

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The micro-kernels, in gemm_amd64.s: a 6- or 4-row by 16-column tile of
// C += A @ B over a float32 or a half-precision panel.

//go:noescape
func kern6x16(k int, a *float32, lda int, b *float32, c *float32, ldc int)

//go:noescape
func kern4x16(k int, a *float32, lda int, b *float32, c *float32, ldc int)

//go:noescape
func kern6x16h(k int, a *float32, lda int, b *uint16, c *float32, ldc int)

//go:noescape
func kern4x16h(k int, a *float32, lda int, b *uint16, c *float32, ldc int)

var (
	haveFMA  = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	haveF16C = haveFMA && cpu.X86.HasF16C
)

// tile adds a[0:tr rows] @ panel to c[0:tr rows][0:16], tr being 6 or 4; it
// has the bounds checked (a: (tr-1)*lda+k, panel: 16*k, c: (tr-1)*ldc+16
// elements).
func tile(tr, k int, a []float32, lda int, panel []float32, c []float32, ldc int) {
	if !haveFMA {
		tileGo(tr, k, a, lda, panel, c, ldc)
		return
	}
	_ = a[(tr-1)*lda+k-1]
	_ = panel[16*k-1]
	_ = c[(tr-1)*ldc+15]
	if tr == 6 {
		kern6x16(k, unsafe.SliceData(a), lda, unsafe.SliceData(panel), unsafe.SliceData(c), ldc)
	} else {
		kern4x16(k, unsafe.SliceData(a), lda, unsafe.SliceData(panel), unsafe.SliceData(c), ldc)
	}
}

// tileHalf is tile over a half-precision panel.
func tileHalf(tr, k int, a []float32, lda int, panel []uint16, c []float32, ldc int) {
	if !haveF16C {
		tileHalfGo(tr, k, a, lda, panel, c, ldc)
		return
	}
	_ = a[(tr-1)*lda+k-1]
	_ = panel[16*k-1]
	_ = c[(tr-1)*ldc+15]
	if tr == 6 {
		kern6x16h(k, unsafe.SliceData(a), lda, unsafe.SliceData(panel), unsafe.SliceData(c), ldc)
	} else {
		kern4x16h(k, unsafe.SliceData(a), lda, unsafe.SliceData(panel), unsafe.SliceData(c), ldc)
	}
}
