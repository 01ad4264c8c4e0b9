package askeval

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/sqlstore"
)

// EmbedText is the text a row is embedded from: rowcall.EmbedText (its
// "# WHAT:" and "# WHEN_TO_USE:" lines without their labels), and with
// keyWords the row's key split on "_" and lower-cased first
// ("stripe refund charge. Refund a card charge …").
func EmbedText(r rowcall.Row, keyWords bool) string {
	text := rowcall.EmbedText(&r)
	if keyWords {
		text = strings.ToLower(strings.ReplaceAll(r.Key, "_", " ")) + ". " + text
	}
	return text
}

// Embedder is what the rankers need of an encoder (*use.Encoder is one).
type Embedder interface {
	Embed(text string) []float32
	EmbedBatch(texts []string) [][]float32
}

// VectorSearch ranks rows by the cosine of the query's embedding with each
// row's (EmbedText) embedding, in the hosts' in-memory index.
type VectorSearch struct {
	Enc   Embedder
	Index *vectors.Memory
}

// Rank implements Ranker.
func (v VectorSearch) Rank(ctx context.Context, query string) ([]string, error) {
	hits, err := v.Index.Nearest(ctx, use.Model, v.Enc.Embed(query), Depth, rowcall.VectorFilter{All: true})
	var keys []string
	for _, h := range hits {
		keys = append(keys, h.Key)
	}
	return keys, err
}

// Hybrid is the hosts' ranking (vectors.Ranker: word search and vector
// search fused linearly, Weight × bm25/best + (1 − Weight) × cosine over the
// top K of each side) over the dev set's store and vectors.
type Hybrid struct {
	Store  *sqlstore.Store
	Enc    Embedder
	Index  *vectors.Memory
	Weight float64 // the words' share, 0 to 1
	K      int     // candidates from each side (word search gives at most 100)
	Near   bool    // score the matches ask answers (SearchFilter.Near)
	Hub    float64 // vectors.Ranker's Hub
	// Learned is what the ranking learned from use (NewLearner, Replay);
	// nil: nothing.
	Learned vectors.Learned
}

// Ranker is h as the hosts' ranking; set its Reranker to score a rerank
// of the best vectors.RerankDepth as the hosts run it.
func (h Hybrid) Ranker() *vectors.Ranker {
	return &vectors.Ranker{Words: h.Store, Embedder: asModel{h.Enc}, Index: h.Index, Weight: h.Weight, K: h.K, Hub: h.Hub, Learned: h.Learned}
}

// asModel is an Embedder as the rowcall.Embedder of the dev set's vectors
// (use.Model: the index holds them under it).
type asModel struct{ Embedder }

func (asModel) Model() rowcall.EmbedModel { return use.Model }

func (e asModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if enc, ok := e.Embedder.(*use.Encoder); ok {
		return use.Embedder{Enc: enc}.Embed(ctx, texts) // as the hosts embed (rowcall.Cores)
	}
	return e.EmbedBatch(texts), nil
}

// Rank implements Ranker.
func (h Hybrid) Rank(ctx context.Context, query string) ([]string, error) {
	hits, err := h.Ranker().Search(ctx, query, rowcall.SearchFilter{Limit: Depth, Near: h.Near})
	var keys []string
	for _, hit := range hits {
		keys = append(keys, hit.Row.Key)
	}
	return keys, err
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

// EmbedRows returns the index of rows' EmbedText embeddings, made by
// EmbedTexts (so cached under cacheDir between runs).
func EmbedRows(enc Embedder, rows []rowcall.Row, keyWords bool, cacheDir string, progress func(done, todo int)) (*vectors.Memory, error) {
	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = EmbedText(r, keyWords)
	}
	vecs, err := EmbedTexts(enc, texts, cacheDir, progress)
	if err != nil {
		return nil, err
	}
	vs := make([]rowcall.Vector, len(rows))
	for i, r := range rows {
		vs[i] = rowcall.Vector{Key: r.Key, TextHash: rowcall.EmbedHash(use.Model, texts[i]), Values: vecs[i], Category: r.Category, Enabled: true, Visible: true}
	}
	ix := vectors.NewMemory()
	return ix, ix.Upsert(context.Background(), use.Model, vs)
}

// EmbedTexts returns the embeddings of texts, in order. Vectors already in
// the cache file under cacheDir (one file per model, each record
// rowcall.EmbedHash of the model and text, then the vector) are reused; the
// rest are embedded across GOMAXPROCS goroutines and the file rewritten with
// them. progress, if not nil, is told how many texts are embedded so far.
func EmbedTexts(enc Embedder, texts []string, cacheDir string, progress func(done, todo int)) ([][]float32, error) {
	file := filepath.Join(cacheDir, use.Model.Name+".vec")
	cache, err := readCache(file)
	if err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(texts))
	hashes := make([][32]byte, len(texts))
	var missing []int
	for i, t := range texts {
		hashes[i] = rowcall.EmbedHash(use.Model, t)
		if v, ok := cache[hashes[i]]; ok {
			vecs[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return vecs, nil
	}
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
				in := make([]string, len(part))
				for j, i := range part {
					in[j] = texts[i]
				}
				out := enc.EmbedBatch(in)
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
	return vecs, writeCache(file, cache)
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

// The hybrid settings chosen on the tune split (docs/benchmarks.md, "Ask",
// has the kept figures; the variants' are in it as of 3914574), which the hosts use (vectors.Weight,
// vectors.K).
const (
	ChosenWeight   = vectors.Weight
	ChosenK        = vectors.K
	ChosenKeyWords = false
)
