//go:build !amd64 || purego

package use

func tile(tr, k int, a []float32, lda int, panel []float32, c []float32, ldc int) {
	tileGo(tr, k, a, lda, panel, c, ldc)
}

func tileHalf(tr, k int, a []float32, lda int, panel []uint16, c []float32, ldc int) {
	tileHalfGo(tr, k, a, lda, panel, c, ldc)
}
