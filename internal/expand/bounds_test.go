package expand

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/learn"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore"
)

// counting is a model that answers each call with questions of its own
// (call n: "how do I pay supplier n?") and keeps the requests.
type counting struct{ reqs []dispatch.Request }

func (c *counting) Dispatch(_ context.Context, req dispatch.Request) (dispatch.Result, error) {
	c.reqs = append(c.reqs, req)
	n := len(c.reqs)
	return dispatch.Result{OK: true, Ran: true, Result: fmt.Sprintf("how do I pay supplier %d?\nwhere is invoice %d?", n, n),
		Receipt: rowcall.Receipt{ID: fmt.Sprint("inv_", n)}}, nil
}

// boundsStore is a store with the expansion row (allowed_categories
// allowed) and PAY.
func boundsStore(t *testing.T, allowed string) (*sqlstore.Store, rowcall.Row) {
	ctx := context.Background()
	store := testenv.Store(t)
	x := rowcall.NewRow("ASK_EXPAND", rowcall.TypeAgent)
	x.Target, x.Content, x.AllowedCategories = "suite-1", "# WHAT: Writes questions\n"+Prompt, allowed
	r := rowcall.NewRow("PAY", rowcall.TypeHTTP)
	r.Target, r.Content = "GET https://example.test/pay", "# WHAT: Pay a supplier's invoice."
	for _, row := range []rowcall.Row{x, r} {
		if _, err := store.Create(ctx, row); err != nil {
			t.Fatal(err)
		}
	}
	return store, r
}

// An expansion row that offers tools is refused before its model is
// called, with a code and a way out.
func TestExpansionRowWithToolsIsRefused(t *testing.T) {
	ctx := context.Background()
	store, r := boundsStore(t, "*")
	m := &counting{}
	x := &Expander{Dispatcher: m, Store: store, Learner: &learn.Learner{Store: store}, Key: "ASK_EXPAND"}
	err := x.Expand(ctx, r)
	if rowcall.ErrorCode(err) != rowcall.EExpandTools || len(m.reqs) != 0 {
		t.Fatalf("an expansion row offering tools: %v, %d calls", err, len(m.reqs))
	}
	var e *rowcall.Error
	if !errors.As(err, &e) || e.HowToFix == "" {
		t.Fatalf("no way out: %#v", err)
	}
}

// The expansion runs as a token whose scope is the expansion row alone,
// that does not teach, with the daily budget: not as the owner.
func TestExpansionRunsAsItsOwnToken(t *testing.T) {
	ctx := context.Background()
	store, r := boundsStore(t, "")
	m := &counting{}
	x := &Expander{Dispatcher: m, Store: store, Learner: &learn.Learner{Store: store}, Key: "ASK_EXPAND", DailyUSD: 0.5}
	if err := x.Expand(ctx, r); err != nil {
		t.Fatal(err)
	}
	if len(m.reqs) != 1 {
		t.Fatalf("%d calls", len(m.reqs))
	}
	tok := m.reqs[0].Token
	if tok == nil || tok.ID != TokenID || !slices.Equal(tok.Keys, []string{"ASK_EXPAND"}) || len(tok.Categories) != 0 || tok.Teach ||
		tok.BudgetUSDDay != 0.5 || m.reqs[0].Payer != nil {
		t.Fatalf("the expansion's authority: %+v", tok)
	}
	if other := rowcall.NewRow("DIR_PATCH", rowcall.TypeHTTP); tok.Covers(&other) {
		t.Fatal("the expansion's token covers another row")
	}
}

// A text that changes and changes back is sent to the model once: the
// questions of a text it wrote before come back with it.
func TestTextThatComesBackIsNotExpandedAgain(t *testing.T) {
	ctx := context.Background()
	store, a := boundsStore(t, "")
	m := &counting{}
	x := &Expander{Dispatcher: m, Store: store, Learner: &learn.Learner{Store: store}, Key: "ASK_EXPAND"}
	b := a
	b.Content = "# WHAT: Pay a supplier's invoice, by card."
	texts := func() []string {
		ps, err := store.Phrases(ctx, "PAY", false)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.Text)
		}
		slices.Sort(out)
		return out
	}
	for i, r := range []rowcall.Row{a, b, a, b, a} {
		if err := x.Expand(ctx, r); err != nil {
			t.Fatal(err)
		}
		n := 1 + i%2
		want := []string{fmt.Sprintf("how do I pay supplier %d?", n), fmt.Sprintf("where is invoice %d?", n)}
		if got := texts(); !slices.Equal(got, want) {
			t.Fatalf("write %d: the row's questions %q, want %q", i+1, got, want)
		}
	}
	if len(m.reqs) != 2 {
		t.Fatalf("two texts flipping back and forth were sent to the model %d times, want 2", len(m.reqs))
	}
}

// A row written after Start and before Run's first pass is expanded: the
// host notes where the event log stands before it serves, so a row written
// as it starts is not taken for one written before.
func TestRowWrittenAsTheHostStartsIsExpanded(t *testing.T) {
	ctx := context.Background()
	store, _ := boundsStore(t, "")
	m := &counting{}
	x := &Expander{Dispatcher: m, Store: store, Learner: &learn.Learner{Store: store}, Key: "ASK_EXPAND"}
	if err := x.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r := rowcall.NewRow("REFUND", rowcall.TypeHTTP)
	r.Target, r.Content = "GET https://example.test/refund", "# WHAT: Refund a card charge."
	if _, err := store.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := x.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := store.Phrases(ctx, "REFUND", false)
	if err != nil || len(ps) == 0 || len(m.reqs) != 1 {
		t.Fatalf("REFUND, written after Start: %d phrases, %d model calls (%v)", len(ps), len(m.reqs), err)
	}
	if ps, _ := store.Phrases(ctx, "PAY", false); len(ps) != 0 {
		t.Fatalf("PAY, written before Start, was expanded: %v", ps)
	}
}
