package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/rowcall/rowcall"
)

// However the statements of calls that replace a row's questions at once
// interleave (each stores its set with LearnSet, then forgets the row's
// others with ForgetPhrases), the row ends with the whole set of one of them,
// also when their sets share questions; the questions of the row's earlier
// text go, and a question the owner approved stays.
func TestRacingQuestionSetsLeaveOneWholeSet(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	receipts := []string{"inv_A", "inv_B", "inv_C"}
	sets := map[string][]string{ // each shares a question with each other, and one with all
		"inv_A":   {"all", "ab", "ac", "a"},
		"inv_B":   {"all", "ab", "bc", "b"},
		"inv_C":   {"all", "ac", "bc", "c"},
		"inv_old": {"all", "old", "older"},
	}
	set := func(key, receipt string) []rowcall.Phrase {
		var ps []rowcall.Phrase
		for _, q := range sets[receipt] {
			ps = append(ps, rowcall.Phrase{Key: key, Scope: "*", Text: q, Source: rowcall.SourceModel, Actor: "model:X", Receipt: receipt})
		}
		return ps
	}
	// Every order of the calls' statements in which each call stores before
	// it forgets: steps[i] is how far receipts[i]'s call is.
	var orders [][]int
	var grow func(order, steps []int)
	grow = func(order, steps []int) {
		if len(order) == 2*len(receipts) {
			orders = append(orders, order)
			return
		}
		for i, n := range steps {
			if n < 2 {
				next := slices.Clone(steps)
				next[i]++
				grow(append(slices.Clip(order), i), next)
			}
		}
	}
	grow(nil, make([]int, len(receipts)))
	if len(orders) != 90 {
		t.Fatalf("%d orders, want 6!/2³ = 90", len(orders))
	}
	for n, order := range orders {
		key := fmt.Sprintf("K%02d", n)
		if err := s.LearnSet(ctx, set(key, "inv_old")); err != nil {
			t.Fatal(err)
		}
		approved := rowcall.Phrase{Key: key, Scope: "*", Text: "kept", Source: rowcall.SourceModel, Approved: true, Actor: "model:X", Receipt: "inv_old"}
		if err := s.LearnSet(ctx, []rowcall.Phrase{approved}); err != nil {
			t.Fatal(err)
		}
		stored := map[int]bool{}
		var did []string
		for _, i := range order {
			rc := receipts[i]
			if !stored[i] {
				stored[i] = true
				did = append(did, "store "+rc)
				if err := s.LearnSet(ctx, set(key, rc)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			did = append(did, "forget "+rc)
			if err := s.ForgetPhrases(ctx, key, rowcall.SourceModel, rc, len(sets[rc])); err != nil {
				t.Fatal(err)
			}
		}
		ps, err := s.Phrases(ctx, key, false)
		if err != nil {
			t.Fatal(err)
		}
		byReceipt := map[string][]string{}
		for _, p := range ps {
			if p.Approved {
				continue
			}
			byReceipt[p.Receipt] = append(byReceipt[p.Receipt], p.Text)
		}
		if len(byReceipt) != 1 {
			t.Fatalf("after %q the row's questions are %q, want one call's", did, byReceipt)
		}
		for rc, texts := range byReceipt {
			if slices.Sort(texts); !slices.Equal(texts, slices.Sorted(slices.Values(sets[rc]))) {
				t.Fatalf("after %q the row keeps %q of %s, want all of %q", did, texts, rc, sets[rc])
			}
		}
		if !slices.ContainsFunc(ps, func(p rowcall.Phrase) bool { return p.Text == "kept" && p.Approved }) {
			t.Fatalf("after %q the approved question is gone", did)
		}
	}
}
