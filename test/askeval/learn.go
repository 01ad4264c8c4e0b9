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
