package askeval

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/kljensen/snowball/english"
	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// stopwords are ignored on both sides when comparing an intent with its row.
// Every one is also a stop word of ask's own search (sqlstore), so a word
// ignored here is a word ask ignores too.
var stopwords = strings.Fields(`a an and are as at be by can do does for from how i in is it its me my of on or
	that the this to us we what when where which who will with you your`)

// words splits text the way ask's search does (letters and digits, lower
// case), drops one-letter words and stopwords.
func words(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 2 && !slices.Contains(stopwords, w) {
			out = append(out, w)
		}
	}
	return out
}

// rowText is every indexed word of a target: key words, category, and the
// whole content (WHAT, WHEN_TO_USE, ARGS lines).
func rowText(key, category, content string) string {
	return key + " " + category + " " + content
}

// snowballShared returns the intent's words whose Porter2 (snowball English)
// stem is also a stem of a word of text.
func snowballShared(intent, text string) []string {
	stems := map[string]bool{}
	for _, w := range words(text) {
		stems[english.Stem(w, false)] = true
	}
	var out []string
	for _, w := range words(intent) {
		if stems[english.Stem(w, false)] {
			out = append(out, w)
		}
	}
	return out
}

// porterIndex is an FTS5 table with the porter tokenizer ask's index uses,
// one row per target.
type porterIndex struct {
	db  *sql.DB
	ids map[string]int
}

func newPorterIndex(t *testing.T, rows []rowcall.Row) *porterIndex {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "porter.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61')`); err != nil {
		t.Fatal(err)
	}
	p := &porterIndex{db: db, ids: map[string]int{}}
	for i, r := range rows {
		p.ids[r.Key] = i + 1
		if _, err := db.Exec(`INSERT INTO t (rowid, x) VALUES (?, ?)`, i+1, rowText(r.Key, r.Category, r.Content)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// shared returns the intent's words that match the target's row in FTS5 as
// ask's search matches them (porter stems; a prefix term from four letters).
func (p *porterIndex) shared(t *testing.T, intent, key string) []string {
	var out []string
	for _, w := range words(intent) {
		term := `"` + w + `"`
		if len(w) >= 4 {
			term += "*"
		}
		var n int
		if err := p.db.QueryRow(`SELECT count(*) FROM t WHERE t MATCH ? AND rowid = ?`, term, p.ids[key]).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out = append(out, w)
		}
	}
	return out
}

// TestLabels proves every intent's kind, in every set: a "none" intent
// shares no word with its row by either stemmer (snowball Porter2 here, FTS5's
// porter with ask's prefix terms), a "shared" intent shares at least one by
// both.
func TestLabels(t *testing.T) {
	for _, name := range SetNames {
		set, err := LoadSet(name)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]string{}
		for _, r := range set.Targets {
			rows[r.Key] = rowText(r.Key, r.Category, r.Content)
		}
		p := newPorterIndex(t, set.Targets)
		for _, in := range set.Intents {
			text, ok := rows[in.Key]
			if !ok {
				t.Errorf("%s: %q: target %s is not a target row", name, in.Text, in.Key)
				continue
			}
			sb, fts := snowballShared(in.Text, text), p.shared(t, in.Text, in.Key)
			switch in.Kind {
			case None:
				if len(sb)+len(fts) > 0 {
					t.Errorf("%s: none intent %q shares %v (snowball) %v (porter) with %s", name, in.Text, sb, fts, in.Key)
				}
			case Shared:
				if len(sb) == 0 || len(fts) == 0 {
					t.Errorf("%s: shared intent %q shares %v (snowball) %v (porter) with %s: needs a word by both", name, in.Text, sb, fts, in.Key)
				}
			default:
				t.Errorf("%s: %q: kind %q is neither shared nor none", name, in.Text, in.Kind)
			}
		}
	}
}

// TestCounts holds the set to its minimums (120 targets, 240 intents), and the splits to half
// each, stratified by kind and by domain.
func TestCounts(t *testing.T) {
	targets := Targets()
	domainOf := map[string]string{}
	for _, r := range targets {
		if _, dup := domainOf[r.Key]; dup {
			t.Errorf("target key %s appears twice", r.Key)
		}
		domainOf[r.Key] = r.Category
		if r.DocLine("WHAT") == "" || r.DocLine("WHEN_TO_USE") == "" || r.DocLine("ARGS") == "" {
			t.Errorf("target %s lacks a WHAT, WHEN_TO_USE or ARGS line", r.Key)
		}
	}
	domains := map[string]int{}
	for _, d := range domainOf {
		domains[d]++
	}
	intents := Intents()
	perTarget := map[string]int{}
	tally := map[string]int{} // kind/split and domain/kind/split
	texts := map[string]bool{}
	for _, in := range intents {
		if texts[in.Text] {
			t.Errorf("intent %q appears twice", in.Text)
		}
		texts[in.Text] = true
		perTarget[in.Key]++
		if in.Split != Tune && in.Split != Test {
			t.Errorf("%q: split %q is neither tune nor test", in.Text, in.Split)
		}
		tally[in.Kind+"/"+in.Split]++
		tally[domainOf[in.Key]+"/"+in.Kind+"/"+in.Split]++
	}
	if len(targets) < 120 || len(domains) < 20 || len(intents) < 240 {
		t.Errorf("%d targets in %d domains, %d intents; want at least 120, 20, 240", len(targets), len(domains), len(intents))
	}
	for _, r := range targets {
		if perTarget[r.Key] < 2 {
			t.Errorf("target %s has %d intents, want at least 2", r.Key, perTarget[r.Key])
		}
	}
	if s, n := tally[Shared+"/"+Tune]+tally[Shared+"/"+Test], tally[None+"/"+Tune]+tally[None+"/"+Test]; s != n {
		t.Errorf("%d shared and %d none intents; want half each", s, n)
	}
	for _, k := range []string{Shared, None} {
		if a, b := tally[k+"/"+Tune], tally[k+"/"+Test]; a != b {
			t.Errorf("%s intents: %d tune, %d test; want half each", k, a, b)
		}
		for d := range domains {
			if a, b := tally[d+"/"+k+"/"+Tune], tally[d+"/"+k+"/"+Test]; a-b > 1 || b-a > 1 {
				t.Errorf("domain %s, %s intents: %d tune, %d test; want within one", d, k, a, b)
			}
		}
	}
}

// TestDistractors checks the generated rows: 10,000 of them, unique keys that
// are no target's, the targets' categories, and no target's action (a
// housekeeping verb that is a word of a target's key or the first word of its
// WHAT, or a target's WHAT).
func TestDistractors(t *testing.T) {
	targets := Targets()
	keys, whats, cats := map[string]bool{}, map[string]bool{}, map[string]bool{}
	actions := map[string]string{} // stem → target key
	for _, r := range targets {
		keys[r.Key], whats[r.DocLine("WHAT")], cats[r.Category] = true, true, true
		for _, w := range append(words(strings.ReplaceAll(r.Key, "_", " ")), words(r.DocLine("WHAT"))[0]) {
			actions[english.Stem(w, false)] = r.Key
		}
	}
	ds := Distractors(10_000, Seed)
	if len(ds) != 10_000 {
		t.Fatalf("%d distractors, want 10000", len(ds))
	}
	for _, d := range ds {
		r := d.Row
		if keys[r.Key] {
			t.Errorf("distractor key %s is taken", r.Key)
		}
		keys[r.Key] = true
		if !cats[r.Category] {
			t.Errorf("distractor %s: category %q is no target's", r.Key, r.Category)
		}
		if k, ok := actions[english.Stem(d.Verb, false)]; ok {
			t.Errorf("distractor %s: verb %q is the action of target %s", r.Key, d.Verb, k)
		}
		if whats[r.DocLine("WHAT")] {
			t.Errorf("distractor %s repeats a target's WHAT", r.Key)
		}
	}
	// The same seed gives the same directory; another seed another order.
	again := Distractors(10_000, Seed)
	if fmt.Sprint(again[0].Row.Key, again[9999].Row.Key) != fmt.Sprint(ds[0].Row.Key, ds[9999].Row.Key) {
		t.Error("Distractors is not deterministic for one seed")
	}
}

// ranked is a Ranker that answers each intent with a fixed list.
type ranked map[string][]string

func (r ranked) Rank(_ context.Context, q string) ([]string, error) { return r[q], nil }

// TestMeasure checks the figures on a hand-worked example: ranks 1, 3, 4,
// 11 (beyond Depth) and absent give top-1 1/5, top-3 2/5, MRR (1+⅓+¼)/5.
func TestMeasure(t *testing.T) {
	filler := []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}
	at := func(rank int) []string { // the target "T" at a 1-based rank
		out := slices.Clone(filler)
		return slices.Insert(out, rank-1, "T")
	}
	r := ranked{"one": at(1), "three": at(3), "four": at(4), "eleven": at(11), "absent": filler}
	var intents []Intent
	for q := range r {
		intents = append(intents, Intent{Text: q, Key: "T", Kind: Shared, Split: Tune})
	}
	results, err := Run(context.Background(), r, intents)
	if err != nil {
		t.Fatal(err)
	}
	f := Measure(results, func(Intent) bool { return true })
	want := Figures{N: 5, Top1: 0.2, Top3: 0.4, MRR: (1 + 1.0/3 + 0.25) / 5}
	if f.N != want.N || f.Top1 != want.Top1 || f.Top3 != want.Top3 || math.Abs(f.MRR-want.MRR) > 1e-12 {
		t.Errorf("figures %+v, want %+v", f, want)
	}
}

// TestWordSearch runs the score command's path on a small directory: the
// store holds every target and distractor, and a target's own key words find
// it first.
func TestWordSearch(t *testing.T) {
	ctx := context.Background()
	rows := Directory(500)
	store, db, err := NewStore(ctx, t.TempDir(), rows)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM directory`).Scan(&n); err != nil || n != len(Targets())+500 {
		t.Fatalf("the store holds %d rows (%v), want %d", n, err, len(Targets())+500)
	}
	q := "stripe refund charge"
	results, err := Run(ctx, WordSearch{Store: store}, []Intent{{Text: q, Key: "STRIPE_REFUND_CHARGE"}})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Rank != 1 {
		t.Errorf("%q ranks STRIPE_REFUND_CHARGE at %d, want 1", q, results[0].Rank)
	}
}

// TestSetSplits holds every set's splits to half each within each kind (within
// one), every intent once, and every target named by at least one intent
// (the mcp set: by two).
func TestSetSplits(t *testing.T) {
	for _, name := range SetNames {
		set, err := LoadSet(name)
		if err != nil {
			t.Fatal(err)
		}
		tally, texts, per := map[string]int{}, map[string]bool{}, map[string]int{}
		for _, in := range set.Intents {
			if texts[in.Text] {
				t.Errorf("%s: intent %q appears twice", name, in.Text)
			}
			texts[in.Text] = true
			tally[in.Kind+"/"+in.Split]++
			per[in.Key]++
		}
		for _, k := range []string{Shared, None} {
			if a, b := tally[k+"/"+Tune], tally[k+"/"+Test]; a-b > 1 || b-a > 1 || a+b == 0 {
				t.Errorf("%s: %s intents: %d tune, %d test; want half each", name, k, a, b)
			}
		}
		if name == "mcp" {
			for _, r := range set.Targets {
				if per[r.Key] != 2 {
					t.Errorf("mcp: tool %s has %d intents, want 2", r.Key, per[r.Key])
				}
			}
		}
	}
}
