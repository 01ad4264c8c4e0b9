package sqlstore

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/rowcall/rowcall"
)

// candidates is how many of the index's best matches are considered before
// the directory's filters (enabled, planner_visible, a token's scope) apply.
const candidates = 200

// bm25 weights, in the index's column order: key, category, what,
// when_to_use, args, schema_text, doc.
const bm25 = `bm25(directory_fts, 3.0, 2.0, 6.0, 4.0, 1.5, 1.5, 0.4)`

// Search ranks rows for plain words with the FTS5 index (bm25, porter
// stemming). Words become prefix terms joined by OR, each widened with a few
// synonyms, so more matching words rank higher and nothing needs to match
// exactly; ties go to the lower planner_rank.
func (s *Store) Search(ctx context.Context, query string, f rowcall.SearchFilter) ([]rowcall.Hit, error) {
	terms, err := s.budget(ctx, matchTerms(query))
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return []rowcall.Hit{}, nil
	}
	match := strings.Join(terms, " OR ")
	if f.Limit <= 0 {
		f.Limit = 10
	}
	f.Limit = min(f.Limit, 100)
	// FTS5 ranks its matches alone first (its own ORDER BY rank LIMIT is the
	// fast path); only the best candidates are joined to the directory and
	// filtered, so a common word matching half of 100,000 rows costs little.
	where := []string{"1"}
	args := []any{match, candidates + f.Limit*10}
	if !f.All {
		where = append(where, "COALESCE(d.enabled, 1) = 1", "COALESCE(d.planner_visible, 1) = 1")
	}
	if c, a := scopeClause(f.Scope, "d."); c != "" {
		where, args = append(where, c), append(args, a...)
	}
	// The filter and the order need only a few columns; the whole row is
	// read for the hits alone (sorting the candidates with their content
	// cost more than the join).
	q := `SELECT ` + prefixed("d.", columns) + `, b.score FROM (
		SELECT d.key, c.score, d.planner_rank
		FROM (SELECT rowid, ` + bm25 + ` AS score FROM directory_fts WHERE directory_fts MATCH ? ORDER BY score LIMIT ?) c
		JOIN search_keys k ON k.id = c.rowid JOIN directory d ON d.key = k.key
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY c.score, d.planner_rank, d.key LIMIT ?) b
		JOIN directory d ON d.key = b.key ORDER BY b.score, b.planner_rank, b.key`
	// Prepared once (four texts: f.All or not, a scope or not): compiling
	// it cost about a tenth of the search (docs/benchmarks.md, "Ask";
	// commit 394f38a).
	rows, err := s.queryHot(ctx, q, append(args, f.Limit)...)
	return collect(rows, err, func(sc scanner) (h rowcall.Hit, err error) {
		h.Row, err = scanRow(sc, &h.Score)
		return h, err
	})
}

// prefixed qualifies a comma-separated column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// MatchExpr is the FTS5 MATCH expression Search builds for query before it
// applies its budget (every term, OR-ed); test/askeval/cmd/sweep scores other
// column weights over the index with it.
func MatchExpr(query string) string { return strings.Join(matchTerms(query), " OR ") }

// matchBudget is how many matches (summed over the query's terms) FTS5
// scores with bm25 for one search. FTS5 computes bm25 for every row that
// matches before it can sort them, microseconds a row, so in a large
// directory a query with common words would cost tens of milliseconds; past
// the budget, Search leaves out the commonest terms (those matching the most
// rows, which weigh least in bm25) until the rest fit, keeping at least the
// rarest. Chosen on test/askeval's tune split: at 10,000 rows it changes no
// ranking there, at 100,000 it halves an ask's CPU (docs/benchmarks.md, "Ask";
// commit 1736e6e).
const matchBudget = 2000

// termCounts counts each term's matches: the terms are one JSON array, a row
// a term (term: its index; n: its matches).
const termCounts = `SELECT t.key AS term, (SELECT count(*) FROM directory_fts WHERE directory_fts MATCH t.value) AS n FROM json_each(?) t`

// budget is terms, or the rarest of them within matchBudget matches: one
// statement counts each term's matches (not where reads are billed:
// Store.BilledReads). Its text and its one parameter (the terms as a JSON
// array, read by json_each) are the same for any number of terms, so it is
// prepared once and stays within D1's 100 parameters and SQLite's 2,000
// result columns (docs/security.md, "Ask").
func (s *Store) budget(ctx context.Context, terms []string) ([]string, error) {
	if len(terms) < 2 || s.BilledReads {
		return terms, nil
	}
	list, err := json.Marshal(terms)
	if err != nil {
		return nil, err
	}
	rows, err := s.queryHot(ctx, termCounts, string(list))
	counted, err := collect(rows, err, func(sc scanner) (c [2]int, err error) { return c, sc.Scan(&c[0], &c[1]) }) // term, matches
	if err != nil {
		return nil, err
	}
	n := make([]int, len(terms))
	for _, c := range counted {
		if c[0] >= 0 && c[0] < len(n) {
			n[c[0]] = c[1]
		}
	}
	total := 0
	for _, c := range n {
		total += c
	}
	if total <= matchBudget {
		return terms, nil
	}
	order := []int{} // commonest first; a term matching nothing costs nothing and is left out
	drop := map[int]bool{}
	for i := range terms {
		if n[i] == 0 {
			drop[i] = true
		} else {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return n[b] - n[a] })
	for _, i := range order[:max(len(order)-1, 0)] {
		if total <= matchBudget {
			break
		}
		drop[i], total = true, total-n[i]
	}
	kept := terms[:0:0]
	for i, t := range terms {
		if !drop[i] {
			kept = append(kept, t)
		}
	}
	return kept, nil
}

// matchTerms turns plain words into FTS5 query terms (the search joins them
// by OR): each word (letters and digits; stop words dropped) becomes a quoted
// term — a prefix term from four letters on — widened with its synonyms
// (exact terms) and, for a long word, its readings as two words (splits).
// Nothing the caller types can be FTS5 syntax.
func matchTerms(query string) []string {
	var terms []string
	seen := map[string]bool{}
	add := func(w string, prefix bool) {
		if len(w) < 2 || stop[w] || seen[w] {
			return
		}
		seen[w] = true
		t := `"` + w + `"`
		if prefix && len(w) >= 4 { // a cut-off word (TEMPERATUR) still finds its row
			t += "*"
		}
		terms = append(terms, t)
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		add(w, true)
		if !stop[w] {
			for _, p := range splits(w) {
				if !seen[p] {
					seen[p] = true
					terms = append(terms, p)
				}
			}
		}
		for _, s := range synonyms[w] {
			add(s, false)
		}
		if strings.HasSuffix(w, "s") { // a plural's synonyms: dollars → dollar's
			for _, s := range synonyms[strings.TrimSuffix(w, "s")] {
				add(s, false)
			}
		}
	}
	return terms
}

// splitMin is the shortest half splits makes of a closed compound.
const splitMin = 4

// splits is a closed compound's readings as two words ("uppercase": "upper
// case", "uppe rcase"), each a quoted FTS5 phrase: it matches only a row
// where the two words stand side by side, so a wrong reading matches
// nothing. Only words of at least 2 × splitMin letters are split.
func splits(w string) []string {
	r := []rune(w)
	var out []string
	for i := splitMin; i <= len(r)-splitMin; i++ {
		out = append(out, `"`+string(r[:i])+` `+string(r[i:])+`"`)
	}
	return out
}

var stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by can do does for from get give how i in is it its me my
		of on or please show tell that the this to under us we what when where which who why will with you your
		want need some any find`) {
		m[w] = true
	}
	return m
}()

// synonyms widens common intent words toward the words capability docs use.
// It is small on purpose: stemming handles word forms, this handles the
// commonest paraphrases.
var synonyms = map[string][]string{
	"hot": {"temperature", "weather"}, "cold": {"temperature", "weather"}, "warm": {"temperature"},
	"weather": {"forecast", "temperature"}, "forecast": {"weather"},
	"time": {"clock", "now", "date"}, "date": {"today", "calendar"}, "today": {"date"}, "clock": {"time"},
	"send": {"post", "deliver", "message"}, "text": {"sms", "message"}, "sms": {"text", "message"},
	"email": {"mail", "message"}, "mail": {"email"}, "message": {"send", "text"},
	"delete": {"remove", "drop"}, "remove": {"delete"}, "erase": {"delete", "remove"},
	"create": {"add", "new", "insert"}, "add": {"create", "insert"}, "make": {"create"},
	"edit": {"update", "patch", "change", "modify"}, "update": {"edit", "patch", "change"}, "change": {"edit", "update"},
	"modify": {"edit", "update"}, "fetch": {"get", "read", "retrieve"}, "read": {"get", "fetch"}, "look": {"search", "find"},
	"search": {"find", "query", "lookup"}, "lookup": {"search", "find"},
	"list": {"all", "enumerate"}, "price": {"cost", "quote"}, "cost": {"price"}, "money": {"payment", "price"},
	"pay": {"payment", "charge"}, "payment": {"pay", "charge"}, "translate": {"translation", "language"},
	"picture": {"image", "photo"}, "photo": {"image", "picture"}, "image": {"picture", "photo"},
	"location": {"coordinates", "latitude", "longitude", "geocode"}, "address": {"location", "geocode"}, "summarize": {"summary"}, "summary": {"summarize"},
	"proof": {"receipt", "confirm"}, "prove": {"receipt", "confirm"}, "receipt": {"proof", "invocation"},
	"history": {"versions", "changes", "log"}, "changes": {"history"}, "who": {"history"},
	"dollar": {"currency", "exchange"}, "euro": {"currency", "exchange"}, "pound": {"currency", "exchange"},
	"yen": {"currency", "exchange"}, "convert": {"conversion"}, "conversion": {"convert"},
	"english": {"language", "translate"}, "spanish": {"language", "translate"}, "french": {"language", "translate"},
	"german": {"language", "translate"}, "chinese": {"language", "translate"}, "japanese": {"language", "translate"},
	"california": {"pacific"}, "west": {"pacific"}, "seattle": {"pacific"}, "vancouver": {"pacific"},
	"new": {"create"}, "gist": {"summary", "summarize"}, "shrink": {"resize", "smaller"}, "smaller": {"resize", "shrink"},
	"bigger": {"resize"}, "phone": {"mobile", "sms"}, "mobile": {"phone"}, "notify": {"alert", "message"},
	"capability": {"row", "directory"}, "capabilities": {"row", "directory"}, "tool": {"row", "capability"},
}
