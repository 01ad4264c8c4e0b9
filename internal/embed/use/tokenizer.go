package use

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// The tokenizer is a port of @energetic-ai/embeddings 0.2.0's lib/tokenizer.ts
// (itself the tfjs-models universal-sentence-encoder tokenizer): a
// SentencePiece unigram model decoded with Viterbi over a trie of the vocabulary.
// It keeps that code's quirks, because the model was run with them: NFKC, no
// lowercasing, "▁" before the text and for every ASCII space, a character no
// piece starts with becomes id 0 (runs of them merge into one), a tie between
// segmentations goes to the later candidate, and the back-trace steps by the
// piece's length in UTF-16 code units.

const (
	separator     = '\u2581' // "▁", SentencePiece's word-start mark
	reservedCount = 6        // vocabulary[0:6] are control symbols, never matched
)

type trieNode struct {
	children map[rune]*trieNode
	end      bool
	score    float64
	id       int
	runes    int // length of the piece in code points
}

type tokenizer struct {
	root    trieNode
	units16 []int // per id: the piece's length in UTF-16 code units
}

func newTokenizer(vocabJSON []byte) (*tokenizer, error) {
	var vocab [][2]json.RawMessage
	if err := json.Unmarshal(vocabJSON, &vocab); err != nil {
		return nil, fmt.Errorf("use: vocab.json: %w", err)
	}
	if len(vocab) <= reservedCount {
		return nil, fmt.Errorf("use: vocab.json: %d entries, want more than %d", len(vocab), reservedCount)
	}
	t := &tokenizer{units16: make([]int, len(vocab))}
	for id, e := range vocab {
		var piece string
		var score float64
		if err := json.Unmarshal(e[0], &piece); err != nil {
			return nil, fmt.Errorf("use: vocab.json entry %d: %w", id, err)
		}
		if err := json.Unmarshal(e[1], &score); err != nil {
			return nil, fmt.Errorf("use: vocab.json entry %d: %w", id, err)
		}
		t.units16[id] = len(utf16.Encode([]rune(piece)))
		if id >= reservedCount {
			t.insert(piece, score, id)
		}
	}
	return t, nil
}

func (t *tokenizer) insert(piece string, score float64, id int) {
	n := &t.root
	rs := []rune(piece)
	for _, r := range rs {
		c := n.children[r]
		if c == nil {
			if n.children == nil {
				n.children = map[rune]*trieNode{}
			}
			c = &trieNode{}
			n.children[r] = c
		}
		n = c
	}
	if len(rs) > 0 {
		n.end, n.score, n.id, n.runes = true, score, id, len(rs)
	}
}

// prepare is processInput: NFKC, then "▁" first and in place of each space.
func prepare(s string) []rune {
	s = norm.NFKC.String(s)
	if s == "" {
		return nil
	}
	return []rune(string(separator) + strings.ReplaceAll(s, " ", string(separator)))
}

type candidate struct {
	start int
	score float64
	id    int
}

// encode returns the token ids of s.
func (t *tokenizer) encode(s string) []int {
	sym := prepare(s)
	n := len(sym)
	// ending[e] lists the pieces that end at e, by ascending start: the order
	// in which the JavaScript walks its lattice.
	ending := make([][]candidate, n+1)
	for i := 0; i < n; i++ {
		found := false
		node := t.root.children[sym[i]]
		for j := i; j < n && node != nil; j++ {
			if node.end {
				ending[j+1] = append(ending[j+1], candidate{i, node.score, node.id})
				found = true
			}
			if j+1 < n {
				node = node.children[sym[j+1]]
			}
		}
		if !found {
			ending[i+1] = append(ending[i+1], candidate{i, 0, 0})
		}
	}
	best := make([]float64, n+1)
	words := make([]int, n+1)
	for e := 0; e <= n; e++ {
		for _, c := range ending[e] {
			score := c.score + best[c.start]
			if best[e] == 0 || score >= best[e] {
				best[e], words[e] = score, c.id
			}
		}
	}
	var rev []int
	for it := n; it > 0; it -= t.units16[words[it]] {
		rev = append(rev, words[it])
	}
	// Merge runs of unknowns in the back-trace's order, then reverse, as the
	// JavaScript does.
	merged := make([]int, 0, len(rev))
	prevUnk := false
	for _, id := range rev {
		if !(prevUnk && id == 0) {
			merged = append(merged, id)
		}
		prevUnk = id == 0
	}
	slices.Reverse(merged)
	return merged
}
