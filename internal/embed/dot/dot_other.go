//go:build !amd64 || purego

package dot

func scores(q, vecs []float32, dim int, out []float32) { scoresGo(q, vecs, dim, out) }
