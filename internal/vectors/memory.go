package vectors

import (
	"context"
	"slices"
	"sync"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/dot"
)

// Memory is an in-memory vector index: every vector of each model quantised
// to int8 (dot.Int8: a quarter of float32's bytes, the same dev-set figures;
// docs/benchmarks.md) in one flat slice, scanned whole for each query (brute
// force; at 10,000 rows of 512, under a millisecond). It implements rowcall.VectorIndex
// and Scorer; Table keeps one in step with the database.
type Memory struct {
	mu     sync.RWMutex
	models map[string]*set
}

// set is one model's vectors: row i is codes' vector i.
type set struct {
	dim   int
	keys  []string
	codes dot.Int8
	meta  []meta
	pos   map[string]int
	hashs [][32]byte
	sum   []float64 // the vectors' sum, for Centroid
}

type meta struct {
	category string
	live     bool // enabled and planner_visible
}

// NewMemory returns an empty index.
func NewMemory() *Memory { return &Memory{models: map[string]*set{}} }

func (m *Memory) set(model rowcall.EmbedModel, create bool) *set {
	s := m.models[model.ID()]
	if s == nil && create {
		s = &set{dim: model.Dim, codes: dot.Int8{Dim: model.Dim}, pos: map[string]int{}}
		m.models[model.ID()] = s
	}
	return s
}

// Upsert implements rowcall.VectorIndex. A vector of the wrong length is
// skipped: it cannot be of this model.
func (m *Memory) Upsert(_ context.Context, model rowcall.EmbedModel, vs []rowcall.Vector) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.set(model, true)
	for _, v := range vs {
		if len(v.Values) != s.dim {
			continue
		}
		md := meta{category: v.Category, live: v.Enabled && v.Visible}
		if i, ok := s.pos[v.Key]; ok {
			s.add(s.vector(i), -1)
			s.add(v.Values, 1)
			s.codes.Set(i, v.Values)
			s.meta[i], s.hashs[i] = md, v.TextHash
			continue
		}
		s.pos[v.Key] = len(s.keys)
		s.keys = append(s.keys, v.Key)
		s.codes.Append(v.Values)
		s.add(v.Values, 1)
		s.meta = append(s.meta, md)
		s.hashs = append(s.hashs, v.TextHash)
	}
	return nil
}

// Delete implements rowcall.VectorIndex: the last row moves into each
// deleted row's place.
func (m *Memory) Delete(_ context.Context, model rowcall.EmbedModel, keys []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.set(model, false)
	if s == nil {
		return nil
	}
	for _, k := range keys {
		i, ok := s.pos[k]
		if !ok {
			continue
		}
		s.add(s.vector(i), -1)
		last := len(s.keys) - 1
		if i != last {
			s.keys[i], s.meta[i], s.hashs[i] = s.keys[last], s.meta[last], s.hashs[last]
			copy(s.codes.Codes[i*s.dim:(i+1)*s.dim], s.codes.Codes[last*s.dim:])
			s.codes.Scales[i] = s.codes.Scales[last]
			s.pos[s.keys[i]] = i
		}
		s.keys, s.meta, s.hashs = s.keys[:last], s.meta[:last], s.hashs[:last]
		s.codes.Codes, s.codes.Scales = s.codes.Codes[:last*s.dim], s.codes.Scales[:last]
		delete(s.pos, k)
	}
	return nil
}

// Hash returns the text hash stored with key's vector.
func (m *Memory) Hash(model rowcall.EmbedModel, key string) ([32]byte, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if s := m.set(model, false); s != nil {
		if i, ok := s.pos[key]; ok {
			return s.hashs[i], true
		}
	}
	return [32]byte{}, false
}

// Vector returns key's vector (as stored: within about 1e-3 of the
// embedding).
func (m *Memory) Vector(model rowcall.EmbedModel, key string) ([]float32, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if s := m.set(model, false); s != nil {
		if i, ok := s.pos[key]; ok {
			return s.vector(i), true
		}
	}
	return nil, false
}

// Nearest implements rowcall.VectorIndex: one pass of the int8 kernel over
// every vector (on one core when ctx is marked rowcall.OnOneCore), then the
// best k that f passes (ties by key).
func (m *Memory) Nearest(ctx context.Context, model rowcall.EmbedModel, q []float32, k int, f rowcall.VectorFilter) ([]rowcall.VectorHit, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.set(model, false)
	if s == nil || len(q) != s.dim || k <= 0 {
		return nil, nil
	}
	scores := make([]float32, s.codes.Len())
	s.codes.Scores(q, scores, rowcall.Cores(ctx))
	passes := func(i int) bool { return f.Passes(s.keys[i], s.meta[i].category, s.meta[i].live) }
	best := Top(scores, k, passes, func(i, j int) bool { return s.keys[i] < s.keys[j] })
	hits := make([]rowcall.VectorHit, len(best))
	for n, i := range best {
		hits[n] = rowcall.VectorHit{Key: s.keys[i], Cosine: float64(scores[i])}
	}
	return hits, nil
}

// Scores implements Scorer: q's cosine with each of keys that has a vector.
func (m *Memory) Scores(_ context.Context, model rowcall.EmbedModel, q []float32, keys []string) (map[string]float64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := map[string]float64{}
	s := m.set(model, false)
	if s == nil || len(q) != s.dim {
		return out, nil
	}
	one := []float32{0}
	for _, k := range keys {
		if i, ok := s.pos[k]; ok {
			dot.Scores(q, s.vector(i), s.dim, one)
			out[k] = float64(one[0])
		}
	}
	return out, nil
}

// vector is vector i as stored, back in float32.
func (s *set) vector(i int) []float32 {
	v := make([]float32, s.dim)
	scale := s.codes.Scales[i]
	for j, c := range s.codes.Codes[i*s.dim : (i+1)*s.dim] {
		v[j] = scale * float32(c)
	}
	return v
}

// Scorer is a vector index that can also give a query's cosine with rows it
// names (the in-memory index keeps every vector, so it can): the hybrid mix
// then scores a word hit outside the vector side's best K by its cosine too,
// as the dev set measured.
type Scorer interface {
	Scores(ctx context.Context, m rowcall.EmbedModel, q []float32, keys []string) (map[string]float64, error)
}

// Top returns the positions of the k highest scores among those ok accepts
// (nil: all), best first; equal scores in before's order (nil: by position).
// One pass keeping the best k in order.
func Top(scores []float32, k int, ok func(i int) bool, before func(i, j int) bool) []int {
	if k <= 0 {
		return nil
	}
	if before == nil {
		before = func(i, j int) bool { return i < j }
	}
	better := func(i, j int) bool { return scores[i] > scores[j] || (scores[i] == scores[j] && before(i, j)) }
	best := make([]int, 0, k+1)
	for i, s := range scores {
		if len(best) == k && s <= scores[best[k-1]] && !better(i, best[k-1]) { // most rows stop here
			continue
		}
		if ok != nil && !ok(i) {
			continue
		}
		j := len(best)
		for j > 0 && better(i, best[j-1]) {
			j--
		}
		best = slices.Insert(best, j, i)
		if len(best) > k {
			best = best[:k]
		}
	}
	return best
}

// Centroid returns the normalised mean of model's vectors, nil when it has
// none: the direction every row shares (Ranker.Hub). It is kept as a running
// sum, so asking costs one pass over a vector.
func (m *Memory) Centroid(model rowcall.EmbedModel) []float32 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.set(model, false)
	if s == nil || len(s.keys) == 0 {
		return nil
	}
	c := make([]float32, s.dim)
	for j, x := range s.sum {
		c[j] = float32(x)
	}
	normalise(c)
	return c
}

// add adds sign × v to the set's running sum.
func (s *set) add(v []float32, sign float64) {
	if s.sum == nil {
		s.sum = make([]float64, s.dim)
	}
	for j, x := range v {
		s.sum[j] += sign * float64(x)
	}
}
