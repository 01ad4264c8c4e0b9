// Package learn is ask's learning from use: a question a teaching
// credential asked, followed within Window by a successful call of one of
// its matches, becomes a learned phrase of that row (rowcall.Phrase; the
// learned table), embedded as the row's text is, so the next ask put that
// way finds the row.
//
//	l := &learn.Learner{Store: store, Embedder: emb}
//	ranker.Learned = l                    // Asked after each ask; Cosines lift rows in the ranking
//	dispatcher.Called = l.Called          // a successful call after an ask is a lesson
//
// Who teaches: the owner, and tokens minted with teach (rowcall.Token.Teach),
// as far as Teachers (ROWCALL_ASK_LEARN) lets them;
// never a failed call, never an anonymous ask. A phrase is kept under the
// asker's scope (ScopeID) and lifts the row only for asks under the same
// scope, so one token's teaching cannot move another scope's ranking. Each
// row keeps at most Keep phrases a scope and source (the last taught), and a
// phrase learned from use not taught again for TTL ages out, unless the
// owner approved it. Phrases a model wrote for a row (package expand) rank
// it under every scope: they come from the row's own text, not from anyone's
// asks; until the owner approves one it is unconfirmed, without Lift, and
// never ranks its row above another row's own match (vectors.Written).
// Phrases are
// not part of a row: its version and contract hash do not change
// (docs/RATIONALE.md, "Why does ask learn from calls, and from whom?").
package learn

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/dot"
)

// The learning settings (docs/benchmarks.md, "Learning from use").
const (
	// Window is how long after an ask a call of one of its matches teaches.
	Window = 2 * time.Minute
	// Keep is how many phrases a row keeps for one scope, besides those the
	// owner approved: the last taught.
	Keep = 8
	// TTL is how long a phrase not taught again is kept, unless approved.
	TTL = 90 * 24 * time.Hour
	// Lift is what a phrase's cosine with a question is multiplied by to
	// count as the row's own cosine (the row takes the higher of the two):
	// above 1, a question near a phrase someone asked before ranks that row
	// above rows whose text is merely as near. Chosen on test/askeval's tune
	// halves among 0.5, 0.7, 0.8, 0.9, 1.0, 1.1 and 1.25 (docs/benchmarks.md,
	// "Learning from use").
	Lift = 1.25
	// asksKept is how many recent asks one credential's lessons are looked
	// for in; holdersKept how many credentials' asks are kept.
	asksKept    = 8
	holdersKept = 4096
	// fresh is how long one look at the table's stamp serves this process:
	// another host's lessons are seen within it, this one's at once.
	fresh = time.Second
)

// Store is what a Learner reads and writes (sqlstore.Store).
type Store interface {
	Learn(ctx context.Context, p rowcall.Phrase, keep int, stale string) error
	LearnSet(ctx context.Context, ps []rowcall.Phrase) error
	Phrases(ctx context.Context, key string, vectors bool) ([]rowcall.Phrase, error)
	EmbedPhrases(ctx context.Context, ps []rowcall.Phrase) error
	PhrasesStamp(ctx context.Context) (string, error)
	EditPhrase(ctx context.Context, id string, text *string, approved *bool) error
	DeletePhrase(ctx context.Context, id string) error
}

// Learner keeps the recent asks of teaching credentials, turns a call that
// follows one into a phrase, and is the index of learned phrases ask ranks
// with (vectors.Ranker.Learned).
type Learner struct {
	Store    Store
	Embedder rowcall.Embedder // nil: phrases are kept but do not rank (words-only hosts)
	Now      func() time.Time // time.Now when nil
	Lift     float64          // Lift when 0
	Teachers *Teachers        // whose use teaches (ROWCALL_ASK_LEARN); nil: AllTeach

	mu   sync.Mutex
	asks map[string][]asked // holder → its recent asks, oldest first

	imu      sync.Mutex
	stamp    string
	checked  time.Time
	touched  bool
	model    string
	scopes   map[string]*phrases // learned from use and the owner's, by scope
	shared   *phrases            // written by a model (package expand), unapproved: for every scope, unconfirmed
	approved *phrases            // written by a model and approved by the owner: for every scope, as taught
}

// asked is one ask of a teaching credential.
type asked struct {
	query, scope string
	keys         []string
	at           time.Time
}

// phrases are one scope's learned phrases: vector i (of dim) is keys[i]'s.
type phrases struct {
	keys []string
	vecs []float32
}

func (l *Learner) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// ScopeID names a token scope for learned phrases: "*" for the whole
// directory (no token: the owner and anonymous asks), else the scope's keys
// and categories, sorted. A token's scope is never "*", whatever its
// categories: a token of every category ("categories=*") teaches its own
// scope, so no token's teaching moves the owner's ranking (docs/security.md,
// "Learning from use").
func ScopeID(s *rowcall.Scope) string {
	if s == nil {
		return "*"
	}
	keys, cats := slices.Sorted(slices.Values(s.Keys)), slices.Sorted(slices.Values(s.Categories))
	return "keys=" + strings.Join(keys, ",") + ";categories=" + strings.Join(cats, ",")
}

// Teachers says whose use teaches: the owner's asks and calls, those of
// tokens minted with teach, both (AllTeach, the default) or neither. It
// bounds learning from use only: the owner's own phrases (POST
// /api/learned) and a model's (package expand) are kept either way, and
// phrases already learned still rank.
type Teachers struct{ Owner, Tokens bool }

// AllTeach is the default: the owner and tokens minted with teach.
var AllTeach = Teachers{Owner: true, Tokens: true}

// ParseTeachers reads ROWCALL_ASK_LEARN: "" (AllTeach), "owner,tokens",
// "owner", "tokens" or "off".
func ParseTeachers(s string) (Teachers, error) {
	switch strings.TrimSpace(s) {
	case "":
		return AllTeach, nil
	case "off":
		return Teachers{}, nil
	}
	var t Teachers
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "owner":
			t.Owner = true
		case "tokens":
			t.Tokens = true
		default:
			return Teachers{}, fmt.Errorf("%q is not owner, tokens, owner,tokens or off", s)
		}
	}
	return t, nil
}

// teacher is the holder whose asks and calls teach (the owner's, or a live
// token's minted with teach), and whether they may.
func (l *Learner) teacher(owner bool, tok *rowcall.Token) (string, bool) {
	who := AllTeach
	if l.Teachers != nil {
		who = *l.Teachers
	}
	switch {
	case tok != nil:
		return tok.ID, who.Tokens && tok.Teach && tok.State(l.now()) == rowcall.TokenLive
	case owner:
		return rowcall.OwnerHolder, who.Owner
	}
	return "", false
}

// Asked remembers an ask made for a teaching credential (f.For) and its
// matches; any other ask is forgotten at once.
func (l *Learner) Asked(_ context.Context, query string, f rowcall.SearchFilter, hits []rowcall.Hit) {
	if f.For == nil || len(hits) == 0 {
		return
	}
	holder, ok := l.teacher(f.For.Owner, f.For.Token)
	if !ok {
		return
	}
	query = strings.Join(strings.Fields(query), " ")
	if query == "" {
		return
	}
	a := asked{query: query, scope: ScopeID(f.Scope), at: l.now()}
	for _, h := range hits {
		a.keys = append(a.keys, h.Row.Key)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.asks == nil {
		l.asks = map[string][]asked{}
	}
	if _, ok := l.asks[holder]; !ok && len(l.asks) >= holdersKept {
		for h, as := range l.asks { // forget those whose asks are past the window, else any one
			if a.at.Sub(as[len(as)-1].at) > Window || len(l.asks) >= holdersKept {
				delete(l.asks, h)
			}
			if len(l.asks) < holdersKept/2 {
				break
			}
		}
	}
	as := append(l.asks[holder], a)
	l.asks[holder] = as[max(0, len(as)-asksKept):]
}

// Called is told of a successful top-level call (its receipt rc) made by the
// owner or by tok: when that credential may teach and asked, within Window,
// a question that had rc.Key among its matches, the question becomes a
// phrase of that row, under the ask's scope, with rc as its receipt. The
// ask teaches once.
func (l *Learner) Called(ctx context.Context, owner bool, tok *rowcall.Token, rc rowcall.Receipt) {
	holder, ok := l.teacher(owner, tok)
	if !ok || !rc.OK || rc.Shape {
		return
	}
	now := l.now()
	l.mu.Lock()
	as := l.asks[holder]
	var lesson *asked
	for i := len(as) - 1; i >= 0; i-- {
		if now.Sub(as[i].at) <= Window && slices.Contains(as[i].keys, rc.Key) {
			a := as[i]
			lesson = &a
			l.asks[holder] = slices.Delete(as, i, i+1)
			break
		}
	}
	l.mu.Unlock()
	if lesson == nil {
		return
	}
	p := rowcall.Phrase{Key: rc.Key, Scope: lesson.scope, Text: lesson.query, Source: rowcall.SourceUse, Actor: rc.Actor, Receipt: rc.ID}
	if err := l.Teach(ctx, p); err != nil {
		slog.Warn("learn: the lesson was not stored", "key", rc.Key, "err", err)
	}
}

// Teach stores p as a learned phrase (embedded when the Learner has an
// Embedder; else at the next ask that ranks with it).
func (l *Learner) Teach(ctx context.Context, p rowcall.Phrase) error {
	ps := []rowcall.Phrase{p}
	l.embed(ctx, ps)
	err := l.Store.Learn(ctx, ps[0], Keep, l.now().Add(-TTL).UTC().Format(rowcall.Timestamp))
	l.Touch()
	return err
}

// TeachSet stores ps, the phrases one call taught a row (one key, scope,
// source and receipt: a model's questions), at once, embedded as Teach does;
// no phrase is pushed out by Keep (Store.ForgetPhrases replaces the row's
// earlier ones).
func (l *Learner) TeachSet(ctx context.Context, ps []rowcall.Phrase) error {
	l.embed(ctx, ps)
	err := l.Store.LearnSet(ctx, ps)
	l.Touch()
	return err
}

// embed sets the vectors of ps when the Learner has an Embedder that
// answers.
func (l *Learner) embed(ctx context.Context, ps []rowcall.Phrase) {
	if l.Embedder == nil {
		return
	}
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = p.Text
	}
	if vs, err := l.Embedder.Embed(ctx, texts); err == nil && len(vs) == len(ps) {
		for i := range ps {
			ps[i].Model, ps[i].Vector = l.Embedder.Model().ID(), vs[i]
		}
	}
}

// Touch says the learned table changed: the next ask reads it again.
func (l *Learner) Touch() {
	l.imu.Lock()
	l.touched = true
	l.imu.Unlock()
}

// Cosines returns, for each row with phrases learned under f's scope (and
// those a model wrote that the owner approved), the best cosine of q with
// one of them times Lift (taught): what ask takes for the row's cosine when
// it is higher than the row's own (vectors.Ranker). written is, for each row
// with unapproved phrases a model wrote (package expand), the best cosine of
// q with one of them, without Lift: they are unconfirmed, so ask ranks with
// them only as far as no other row's own match is outranked
// (vectors.Written).
func (l *Learner) Cosines(ctx context.Context, m rowcall.EmbedModel, q []float32, f rowcall.SearchFilter) (taught, written map[string]float64, err error) {
	l.imu.Lock()
	defer l.imu.Unlock()
	if err := l.sync(ctx, m); err != nil {
		return nil, nil, err
	}
	if len(q) != m.Dim {
		return nil, nil, nil
	}
	lift := l.Lift
	if lift == 0 {
		lift = Lift
	}
	best := func(out map[string]float64, ps *phrases, lift float64) map[string]float64 {
		if ps == nil || len(ps.keys) == 0 {
			return out
		}
		if out == nil {
			out = make(map[string]float64, len(ps.keys))
		}
		scores := make([]float32, len(ps.keys))
		dot.Scores(q, ps.vecs, m.Dim, scores)
		for i, k := range ps.keys {
			out[k] = max(out[k], lift*float64(scores[i]))
		}
		return out
	}
	taught = best(best(nil, l.scopes[ScopeID(f.Scope)], lift), l.approved, lift)
	return taught, best(nil, l.shared, 1), nil
}

// sync reads the learned phrases again when the table changed (looked at
// most once a second, at once after Touch), embedding those without a vector
// of m. Called with imu held.
func (l *Learner) sync(ctx context.Context, m rowcall.EmbedModel) error {
	now := l.now()
	if l.model == m.ID() && !l.touched && now.Sub(l.checked) < fresh {
		return nil
	}
	stamp, err := l.Store.PhrasesStamp(ctx)
	if err != nil {
		return err
	}
	l.checked, l.touched = now, false
	if l.model == m.ID() && stamp == l.stamp {
		return nil
	}
	all, err := l.Store.Phrases(ctx, "", true)
	if err != nil {
		return err
	}
	stale := now.Add(-TTL).UTC().Format(rowcall.Timestamp)
	var todo []int
	for i, p := range all {
		if p.Model != m.ID() || len(p.Vector) != m.Dim {
			todo = append(todo, i)
		}
	}
	if len(todo) > 0 && l.Embedder != nil && l.Embedder.Model().ID() == m.ID() {
		texts := make([]string, len(todo))
		for j, i := range todo {
			texts[j] = all[i].Text
		}
		vs, err := l.Embedder.Embed(ctx, texts)
		if err != nil {
			return err
		}
		done := make([]rowcall.Phrase, 0, len(todo))
		for j, i := range todo {
			all[i].Model, all[i].Vector = m.ID(), vs[j]
			done = append(done, all[i])
		}
		if err := l.Store.EmbedPhrases(ctx, done); err != nil {
			slog.Warn("learn: phrase vectors not stored", "err", err)
		}
	}
	scopes, shared, approved := map[string]*phrases{}, &phrases{}, &phrases{}
	for _, p := range all {
		if p.Model != m.ID() || len(p.Vector) != m.Dim || (!p.Approved && p.Source == rowcall.SourceUse && p.UsedAt < stale) {
			continue
		}
		// A model wrote it from the row alone: it ranks the row for every
		// scope, unconfirmed (shared) until the owner approves it.
		ps := shared
		switch {
		case p.Source == rowcall.SourceModel && p.Approved:
			ps = approved
		case p.Source != rowcall.SourceModel:
			if ps = scopes[p.Scope]; ps == nil {
				ps = &phrases{}
				scopes[p.Scope] = ps
			}
		}
		ps.keys = append(ps.keys, p.Key)
		ps.vecs = append(ps.vecs, p.Vector...)
	}
	l.scopes, l.shared, l.approved, l.stamp, l.model = scopes, shared, approved, stamp, m.ID()
	return nil
}

// Phrases lists the learned phrases (of key, when not ""), newest first.
func (l *Learner) Phrases(ctx context.Context, key string) ([]rowcall.Phrase, error) {
	return l.Store.Phrases(ctx, key, false)
}

// Edit rewrites phrase id (text, embedded again at the next ask) or sets
// whether the owner approved it.
func (l *Learner) Edit(ctx context.Context, id string, text *string, approved *bool) error {
	defer l.Touch()
	return l.Store.EditPhrase(ctx, id, text, approved)
}

// Forget deletes phrase id.
func (l *Learner) Forget(ctx context.Context, id string) error {
	defer l.Touch()
	return l.Store.DeletePhrase(ctx, id)
}
