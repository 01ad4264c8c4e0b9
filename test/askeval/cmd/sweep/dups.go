package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/rowcall/rowcall/test/askeval"
)

// dups prints how well each way of making a row's vector keeps a near copy
// apart from a distinct row, by TestDuplicateThreshold's rule over the dev
// set's 120 targets and askeval.Paraphrases: the nearest distinct pair's
// cosine, and how many paraphrases are nearer their original than that (a
// threshold above the pair flags them; 11 of 12 is the rule's bar). "new A,
// stored B" compares a written row's vector made as A with the others' made
// as B: a write that checks before its row's vector is complete.
func dups() error {
	enc, err := openEncoder(context.Background())
	if err != nil {
		return err
	}
	rows := askeval.Targets()
	// kinds: a text's WHAT and WHEN_TO_USE lines made into each kind of row
	// vector (joined, sum3, sum2).
	kinds := func(what, when string) map[string][]float32 {
		vs := enc.EmbedBatch([]string{what + " " + when, what, when})
		return map[string][]float32{"joined": vs[0], "sum3": sumOf(vs...), "sum2": sumOf(vs[1], vs[2])}
	}
	targets := make([]map[string][]float32, len(rows))
	for i, r := range rows {
		targets[i] = kinds(r.DocLine("WHAT"), r.DocLine("WHEN_TO_USE"))
	}
	paraphrases := map[int]map[string][]float32{}
	for i, p := range askeval.Paraphrases {
		paraphrases[i] = kinds(askeval.SplitParaphrase(p))
	}
	for _, c := range [][2]string{{"joined", "joined"}, {"sum3", "sum3"}, {"sum2", "sum2"}, {"joined", "sum3"}} {
		nearest := float32(-1)
		for i := range targets {
			for j := range targets {
				if i != j {
					nearest = max(nearest, dot(targets[i][c[0]], targets[j][c[1]]))
				}
			}
		}
		var cos []float32
		above := 0
		for i, p := range paraphrases {
			x := dot(p[c[0]], targets[i*10][c[1]])
			cos = append(cos, x)
			if x > nearest {
				above++
			}
		}
		slices.Sort(cos)
		fmt.Printf("new %-6s stored %-6s  nearest distinct pair %.3f  paraphrases above it %2d of %d  %.3f\n", c[0], c[1], nearest, above, len(cos), cos)
	}
	return nil
}
