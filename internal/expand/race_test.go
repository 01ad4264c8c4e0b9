package expand

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/learn"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore"
)

// model answers Keep questions, the first shared of them the same for every
// model and the others its own, with receipt inv_<id>; when atModel is set it
// closes it and waits for wait before answering.
type model struct {
	id      string
	shared  int
	atModel chan struct{}
	wait    <-chan struct{}
}

func (m *model) questions() []string {
	var qs []string
	for i := range learn.Keep {
		who := m.id
		if i < m.shared {
			who = "anyone"
		}
		qs = append(qs, "how does "+who+" pay back buyer "+string(rune('a'+i))+"?")
	}
	return qs
}

func (m *model) Dispatch(ctx context.Context, req dispatch.Request) (dispatch.Result, error) {
	if m.atModel != nil {
		close(m.atModel)
		<-m.wait
	}
	return dispatch.Result{OK: true, Ran: true, Result: strings.Join(m.questions(), "\n"), Receipt: rowcall.Receipt{ID: "inv_" + m.id}}, nil
}

// hostStore is one host's view of the shared store: its ForgetPhrases runs
// before() first.
type hostStore struct {
	*sqlstore.Store
	before func()
}

func (s hostStore) ForgetPhrases(ctx context.Context, key, source, receipt string, n int) error {
	s.before()
	return s.Store.ForgetPhrases(ctx, key, source, receipt, n)
}

// Two hosts following one event log expand a row just written at once: B
// has found the row without current questions and waits on its model while
// A stores its questions; B stores its own before A forgets the row's others,
// and B forgets them after. The row ends with one whole set of questions, A's
// or B's, whether or not the two models wrote some of the same questions.
func TestRacingExpansionsKeepOneWholeSet(t *testing.T) {
	for name, shared := range map[string]int{"distinct questions": 0, "3 questions in common": 3} {
		t.Run(name, func(t *testing.T) { expandRacing(t, shared) })
	}
}

func expandRacing(t *testing.T, shared int) {
	ctx := context.Background()
	store := testenv.Store(t)
	r := rowcall.NewRow("PAY", rowcall.TypeHTTP)
	r.Target, r.Content = "GET https://example.test/pay", "# WHAT: Return money to a buyer."
	if _, err := store.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	aTaught, bAtForget, aForgot := make(chan struct{}), make(chan struct{}), make(chan struct{})
	aModel := &model{id: "A", shared: shared}
	bModel := &model{id: "B", shared: shared, atModel: make(chan struct{}), wait: aTaught}
	a := &Expander{Dispatcher: aModel, Learner: &learn.Learner{Store: store}, Key: "ASK_EXPAND",
		Store: hostStore{store, func() { close(aTaught); <-bAtForget }}}
	b := &Expander{Dispatcher: bModel, Learner: &learn.Learner{Store: store}, Key: "ASK_EXPAND",
		Store: hostStore{store, func() { close(bAtForget); <-aForgot }}}
	done := make(chan error, 2)
	go func() { done <- b.Expand(ctx, r) }()
	<-bModel.atModel
	go func() { err := a.Expand(ctx, r); close(aForgot); done <- err }()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	ps, err := store.Phrases(ctx, "PAY", false)
	if err != nil {
		t.Fatal(err)
	}
	var texts, receipts []string
	for _, p := range ps {
		texts = append(texts, p.Text)
		if !slices.Contains(receipts, p.Receipt) {
			receipts = append(receipts, p.Receipt)
		}
	}
	slices.Sort(texts)
	if len(receipts) != 1 || (receipts[0] != "inv_A" && receipts[0] != "inv_B") {
		t.Fatalf("the row's questions name receipts %q, want one expansion's (%d questions: %q)", receipts, len(ps), texts)
	}
	want := aModel.questions()
	if receipts[0] == "inv_B" {
		want = bModel.questions()
	}
	slices.Sort(want)
	if !slices.Equal(texts, want) {
		t.Fatalf("the row keeps %q of %s, want all its questions %q", texts, receipts[0], want)
	}
}
