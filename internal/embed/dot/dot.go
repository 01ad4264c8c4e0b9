// Package dot scores a query vector against many stored vectors at once: the
// kernel under every in-memory vector index (the vectors are L2-normalised,
// so a dot product is the cosine).
//
//	out := make([]float32, len(vecs)/dim)
//	dot.Scores(q, vecs, dim, out) // out[i] = q · vecs[i*dim:(i+1)*dim]
package dot

// Scores sets out[i] to the dot product of q (len dim) with the i-th vector of
// vecs (len(out)·dim values, row after row).
func Scores(q, vecs []float32, dim int, out []float32) {
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
