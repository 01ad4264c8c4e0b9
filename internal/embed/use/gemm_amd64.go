//go:build !purego

package use

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// kern4x16 is in gemm_amd64.s.
//
//go:noescape
func kern4x16(k int, a *float32, lda int, b *float32, c *float32, ldc int)

// kern4x16h is in gemm_amd64.s.
//
//go:noescape
func kern4x16h(k int, a *float32, lda int, b *uint16, c *float32, ldc int)

var (
	haveFMA  = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	haveF16C = haveFMA && cpu.X86.HasF16C
)

// tile4x16 adds a[0:4 rows] @ panel to c[0:4 rows][0:16]; it has the
// bounds checked (a: 3*lda+k, panel: 16*k, c: 3*ldc+16 elements).
func tile4x16(k int, a []float32, lda int, panel []float32, c []float32, ldc int) {
	if !haveFMA {
		tile4x16Go(k, a, lda, panel, c, ldc)
		return
	}
	_ = a[3*lda+k-1]
	_ = panel[16*k-1]
	_ = c[3*ldc+15]
	kern4x16(k, unsafe.SliceData(a), lda, unsafe.SliceData(panel), unsafe.SliceData(c), ldc)
}

// tile4x16Half is tile4x16 over a half-precision panel.
func tile4x16Half(k int, a []float32, lda int, panel []uint16, c []float32, ldc int) {
	if !haveF16C {
		tile4x16HalfGo(k, a, lda, panel, c, ldc)
		return
	}
	_ = a[3*lda+k-1]
	_ = panel[16*k-1]
	_ = c[3*ldc+15]
	kern4x16h(k, unsafe.SliceData(a), lda, unsafe.SliceData(panel), unsafe.SliceData(c), ldc)
}
