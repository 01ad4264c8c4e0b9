package askeval

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
	"github.com/rowcall/rowcall"
)

// BM25 is plain Okapi BM25 (k1 1.2, b 0.75) over each row's key words,
// category and content as one field, snowball-stemmed, with none of ask's
// column weights, prefix terms or synonyms: the baseline a ranking must beat.
type BM25 struct {
	keys  []string
	terms []map[string]int // per row: stem → count
	lens  []float64
	avg   float64
	df    map[string]int
}

// NewBM25 indexes rows.
func NewBM25(rows []rowcall.Row) *BM25 {
	b := &BM25{df: map[string]int{}}
	total := 0.0
	for _, r := range rows {
		tf := map[string]int{}
		n := 0
		for _, s := range stems(strings.ReplaceAll(r.Key, "_", " ") + " " + r.Category + " " + r.Content) {
			tf[s]++
			n++
		}
		for s := range tf {
			b.df[s]++
		}
		b.keys, b.terms, b.lens = append(b.keys, r.Key), append(b.terms, tf), append(b.lens, float64(n))
		total += float64(n)
	}
	if len(rows) > 0 {
		b.avg = total / float64(len(rows))
	}
	return b
}

// stems splits text into lower-case words of letters and digits and stems
// each (snowball English).
func stems(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out = append(out, english.Stem(w, false))
	}
	return out
}

// Rank implements Ranker.
func (b *BM25) Rank(_ context.Context, query string) ([]string, error) {
	var keys []string
	for _, h := range b.Scores(query, Depth) {
		keys = append(keys, b.keys[h.Row])
	}
	return keys, nil
}

// Scored is a row's index in the rows NewBM25 was given and its BM25 score.
type Scored struct {
	Row   int
	Score float64
}

// Scores returns the best n rows for query with their scores, best first
// (ties by key).
func (b *BM25) Scores(query string, n int) []Scored {
	const k1, bb = 1.2, 0.75
	q := stems(query)
	slices.Sort(q)
	q = slices.Compact(q)
	rows := float64(len(b.keys))
	var hits []Scored
	for i, tf := range b.terms {
		s := 0.0
		for _, t := range q {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(b.df[t])
			idf := math.Log(1 + (rows-df+0.5)/(df+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-bb+bb*b.lens[i]/b.avg))
		}
		if s > 0 {
			hits = append(hits, Scored{i, s})
		}
	}
	slices.SortFunc(hits, func(x, y Scored) int {
		if x.Score != y.Score {
			if x.Score > y.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(b.keys[x.Row], b.keys[y.Row])
	})
	return hits[:min(len(hits), n)]
}
