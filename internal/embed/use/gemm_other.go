//go:build !amd64 || purego

package use

func tile4x16(k int, a []float32, lda int, panel []float32, c []float32, ldc int) {
	tile4x16Go(k, a, lda, panel, c, ldc)
}

func tile4x16Half(k int, a []float32, lda int, panel []uint16, c []float32, ldc int) {
	tile4x16HalfGo(k, a, lda, panel, c, ldc)
}
