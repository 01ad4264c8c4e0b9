package dispatch

import (
	"sort"
	"strings"
)

// Suggest returns up to n keys closest to attempted: by edit distance, case
// ignored, with keys that contain it (or that it contains) first. Keys further
// than half the attempted length away are not suggested.
func Suggest(attempted string, keys []string, n int) []string {
	a := strings.ToUpper(attempted)
	type scored struct {
		key   string
		score int
	}
	var c []scored
	for _, k := range keys {
		u := strings.ToUpper(k)
		d := distance(a, u)
		if strings.Contains(u, a) || strings.Contains(a, u) {
			d = min(d, 1)
		}
		if d <= max(2, len(a)/2) {
			c = append(c, scored{k, d})
		}
	}
	sort.Slice(c, func(i, j int) bool {
		if c[i].score != c[j].score {
			return c[i].score < c[j].score
		}
		return c[i].key < c[j].key
	})
	out := []string{}
	for i := 0; i < len(c) && i < n; i++ {
		out = append(out, c[i].key)
	}
	return out
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
