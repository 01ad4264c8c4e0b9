package askeval

import (
	"context"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/learn"
)

// NewLearner is the hosts' learning from use (internal/learn) over the dev
// set's store, embedding phrases with enc as h embeds questions.
func NewLearner(h Hybrid) *learn.Learner {
	return &learn.Learner{Store: h.Store, Embedder: asModel{h.Enc}}
}

// Replay is the learning protocol's traffic: for each intent, the owner asks
// it as GET /api/dispatch?ask= does (five matches, the cut-off applied), then
// calls its target successfully, as a host's dispatcher tells the Learner
// (Dispatcher.Called). A target that is not among the matches is not
// called, so teaches nothing. It returns how many intents taught.
func Replay(ctx context.Context, h Hybrid, l *learn.Learner, intents []Intent) (int, error) {
	r := h.Ranker()
	r.Learned = l
	owner := &rowcall.Asker{Owner: true}
	taught := 0
	for i, in := range intents {
		hits, err := r.Search(ctx, in.Text, rowcall.SearchFilter{Limit: 5, Near: true, For: owner})
		if err != nil {
			return taught, err
		}
		for _, hit := range hits {
			if hit.Row.Key == in.Key {
				taught++
				break
			}
		}
		l.Called(ctx, true, nil, rowcall.Receipt{ID: "inv_replay_" + string(rune('a'+i%26)), Actor: "owner:replay", Key: in.Key, OK: true, Material: true})
	}
	return taught, nil
}

// LearnHalves splits a set's questions for the learning protocol: for each
// row with two questions or more, in the set's order, the first half of
// them is traffic (replayed) and the rest is held out (scored); held out are
// only those in split (all: every split), and traffic only the questions
// of the rows held out.
func LearnHalves(intents []Intent, split string) (traffic, heldOut []Intent) {
	byKey := map[string][]Intent{}
	var keys []string
	for _, in := range intents {
		if _, ok := byKey[in.Key]; !ok {
			keys = append(keys, in.Key)
		}
		byKey[in.Key] = append(byKey[in.Key], in)
	}
	for _, k := range keys {
		qs := byKey[k]
		half := len(qs) / 2
		var held []Intent
		for _, in := range qs[half:] {
			if split == "all" || in.Split == split {
				held = append(held, in)
			}
		}
		if half == 0 || len(held) == 0 {
			continue
		}
		traffic, heldOut = append(traffic, qs[:half]...), append(heldOut, held...)
	}
	return traffic, heldOut
}
