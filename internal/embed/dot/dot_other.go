//go:build !amd64 || purego

package dot

func scores(q, vecs []float32, dim int, out []float32) { scoresGo(q, vecs, dim, out) }

func scoresInt8(q []float32, codes []int8, scales []float32, dim int, out []float32) {
	scoresInt8Go(q, codes, scales, dim, out)
}
