package askeval

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/sqlstore"
)

// Model names the encoder the vectors come from; it is part of every cache
// key, so vectors of two models never mix.
const Model = "use-lite-" + use.Version

// EmbedText is the text a row is embedded from: its "# WHAT:" and
// "# WHEN_TO_USE:" lines without their labels, joined by a space (the
// issue's earlier measurement embedded the same two lines). With keyWords,
// the row's key split on "_" and lower-cased comes first
// ("stripe refund charge. Refund a card charge …").
func EmbedText(r rowcall.Row, keyWords bool) string {
	var parts []string
	if keyWords {
		parts = append(parts, strings.ToLower(strings.ReplaceAll(r.Key, "_", " "))+".")
	}
	for _, line := range strings.Split(r.Content, "\n") {
		line = strings.TrimSpace(line)
		for _, label := range []string{"# WHAT:", "# WHEN_TO_USE:"} {
			if rest, ok := strings.CutPrefix(line, label); ok {
				parts = append(parts, strings.TrimSpace(rest))
			}
		}
	}
	return strings.Join(parts, " ")
}

// Index holds one embedding per row, in row order, for a brute-force cosine
// scan (the vectors are L2-normalised, so a dot product is the cosine).
type Index struct {
	Keys []string
	Dim  int
	Vecs []float32 // len(Keys) × Dim, row i at [i*Dim, (i+1)*Dim)
	pos  map[string]int
}

// NewIndex builds an index from keys and their vectors (each of length dim).
func NewIndex(keys []string, vecs [][]float32, dim int) *Index {
	ix := &Index{Keys: keys, Dim: dim, Vecs: make([]float32, 0, len(keys)*dim), pos: make(map[string]int, len(keys))}
	for i, k := range keys {
		ix.Vecs = append(ix.Vecs, vecs[i]...)
		ix.pos[k] = i
	}
	return ix
}

// Cosines returns q's cosine with every row, in row order.
func (ix *Index) Cosines(q []float32) []float32 {
	out := make([]float32, len(ix.Keys))
	for i := range out {
		v := ix.Vecs[i*ix.Dim : (i+1)*ix.Dim : (i+1)*ix.Dim]
		var s0, s1, s2, s3 float32
		j := 0
		for ; j+4 <= len(v); j += 4 {
			s0 += q[j] * v[j]
			s1 += q[j+1] * v[j+1]
			s2 += q[j+2] * v[j+2]
			s3 += q[j+3] * v[j+3]
		}
		for ; j < len(v); j++ {
			s0 += q[j] * v[j]
		}
		out[i] = s0 + s1 + s2 + s3
	}
	return out
}

// top returns the positions of the k highest scores, best first (ties by
// position): one pass keeping the best k in order.
func top(scores []float32, k int) []int {
	if k <= 0 {
		return nil
	}
	best := make([]int, 0, k+1)
	for i, s := range scores {
		if len(best) == k && s <= scores[best[k-1]] {
			continue
		}
		j := len(best)
		for j > 0 && s > scores[best[j-1]] {
			j--
		}
		best = slices.Insert(best, j, i)
		if len(best) > k {
			best = best[:k]
		}
	}
	return best
}

// Embedder is what the rankers need of an encoder (*use.Encoder is one).
type Embedder interface {
	Embed(text string) []float32
	EmbedBatch(texts []string) [][]float32
}

// VectorSearch ranks rows by the cosine of the query's embedding with each
// row's (EmbedText) embedding.
type VectorSearch struct {
	Enc   Embedder
	Index *Index
}

// Rank implements Ranker.
func (v VectorSearch) Rank(_ context.Context, query string) ([]string, error) {
	cos := v.Index.Cosines(v.Enc.Embed(query))
	var keys []string
	for _, i := range top(cos, Depth) {
		keys = append(keys, v.Index.Keys[i])
	}
	return keys, nil
}

// Hybrid fuses word search and vector search linearly. The candidates are the
// union of the top K word hits and the top K rows by cosine; each scores
// Weight·words + (1−Weight)·cosine, where words is the hit's bm25 divided by
// the best (most negative) bm25 among the word hits, so the best word hit
// scores 1 and rows the words missed score 0.
type Hybrid struct {
	Store  *sqlstore.Store
	Enc    Embedder
	Index  *Index
	Weight float64 // the words' share, 0 to 1
	K      int     // candidates from each side (word search gives at most 100)
}

// Rank implements Ranker.
func (h Hybrid) Rank(ctx context.Context, query string) ([]string, error) {
	hits, err := h.Store.Search(ctx, query, rowcall.SearchFilter{Limit: h.K})
	if err != nil {
		return nil, err
	}
	cos := h.Index.Cosines(h.Enc.Embed(query))
	return Fuse(hits, h.Index, cos, h.Weight, h.K), nil
}

// Fuse is Hybrid's arithmetic: hits are the word hits (bm25, lower is
// better), cos the query's cosine with every row of ix. It returns the first
// Depth keys, best first (ties by key).
func Fuse(hits []rowcall.Hit, ix *Index, cos []float32, weight float64, k int) []string {
	return FuseN(hits, ix, cos, weight, k, Depth)
}

// FuseN is Fuse returning the first n keys.
func FuseN(hits []rowcall.Hit, ix *Index, cos []float32, weight float64, k, n int) []string {
	words := map[string]float64{}
	best := 0.0
	for _, h := range hits {
		best = min(best, h.Score)
	}
	for _, h := range hits {
		if best < 0 {
			words[h.Row.Key] = h.Score / best
		}
	}
	type cand struct {
		key   string
		score float64
	}
	seen := map[string]bool{}
	var cands []cand
	add := func(key string) {
		if seen[key] {
			return
		}
		seen[key] = true
		c := 0.0
		if i, ok := ix.pos[key]; ok {
			c = float64(cos[i])
		}
		cands = append(cands, cand{key, weight*words[key] + (1-weight)*c})
	}
	for _, h := range hits {
		add(h.Row.Key)
	}
	for _, i := range top(cos, k) {
		add(ix.Keys[i])
	}
	slices.SortFunc(cands, func(a, b cand) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return strings.Compare(a.key, b.key)
	})
	keys := make([]string, 0, n)
	for _, c := range cands[:min(n, len(cands))] {
		keys = append(keys, c.key)
	}
	return keys
}

// VectorCacheDir is where EmbedRows keeps vectors between runs:
// the user's cache directory, rowcall/askeval-vectors.
func VectorCacheDir() (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(c, "rowcall", "askeval-vectors"), nil
}

// EmbedRows returns the index of rows' EmbedText embeddings. Vectors already in
// the cache file under cacheDir (one file per model, each record the SHA-256
// of the model and text, then the vector) are reused; the rest are embedded
// across GOMAXPROCS goroutines and the file rewritten with them. progress,
// if not nil, is told how many rows are embedded so far.
func EmbedRows(enc Embedder, rows []rowcall.Row, keyWords bool, cacheDir string, progress func(done, todo int)) (*Index, error) {
	file := filepath.Join(cacheDir, Model+".vec")
	cache, err := readCache(file)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(rows))
	vecs := make([][]float32, len(rows))
	hashes := make([][32]byte, len(rows))
	var missing []int
	for i, r := range rows {
		keys[i] = r.Key
		hashes[i] = sha256.Sum256([]byte(Model + "\x00" + EmbedText(r, keyWords)))
		if v, ok := cache[hashes[i]]; ok {
			vecs[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		const batch = 16
		var mu sync.Mutex
		done := 0
		next := make(chan []int)
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for part := range next {
					texts := make([]string, len(part))
					for j, i := range part {
						texts[j] = EmbedText(rows[i], keyWords)
					}
					out := enc.EmbedBatch(texts)
					mu.Lock()
					for j, i := range part {
						vecs[i] = out[j]
						cache[hashes[i]] = out[j]
					}
					done += len(part)
					if progress != nil {
						progress(done, len(missing))
					}
					mu.Unlock()
				}
			}()
		}
		for i := 0; i < len(missing); i += batch {
			next <- missing[i:min(i+batch, len(missing))]
		}
		close(next)
		wg.Wait()
		if err := writeCache(file, cache); err != nil {
			return nil, err
		}
	}
	return NewIndex(keys, vecs, use.Dim), nil
}

// readCache reads a cache file; a missing file is an empty cache.
func readCache(file string) (map[[32]byte][]float32, error) {
	cache := map[[32]byte][]float32{}
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return cache, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	buf := make([]byte, 32+4*use.Dim)
	for {
		if _, err := io.ReadFull(r, buf); err == io.EOF {
			return cache, nil
		} else if err != nil {
			return nil, fmt.Errorf("askeval: vector cache %s is damaged (%v); delete it to re-embed", file, err)
		}
		v := make([]float32, use.Dim)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[32+4*j:]))
		}
		cache[[32]byte(buf[:32])] = v
	}
}

// writeCache replaces the cache file with cache's records (via a temporary
// file and a rename, so a reader never sees half a file).
func writeCache(file string, cache map[[32]byte][]float32) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".vec-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	buf := make([]byte, 4*use.Dim)
	for h, v := range cache {
		for j, x := range v {
			binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
		}
		w.Write(h[:])
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// The hybrid settings chosen on the tune split (docs/benchmarks.md, "Finding
// by meaning: the dev set", says how).
const (
	ChosenWeight   = 0.15
	ChosenK        = 100
	ChosenKeyWords = false
)
