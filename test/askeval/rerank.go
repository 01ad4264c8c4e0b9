package askeval

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/rerank"
	"github.com/rowcall/rowcall/runners/agent"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/test/modelserver"
)

// Reranked is Hybrid with its first rerank.DefaultMax keys reordered by a
// rerank row, through the path production takes: rerank.Agent dispatches the
// row ASK_RERANK (rerank.Prompt, an agent row) on a dispatcher with a signed
// receipt log, whose agent runner sends the chat completion to the stand-in
// model server (test/modelserver) on loopback. The stand-in answers with the
// candidates' keys ordered by a StandIn, which reads only what the row's
// user message holds (the question and each candidate's "KEY: WHAT. Use
// when: WHEN_TO_USE" line): no labels, no other row text. A failed rerank
// keeps the hybrid order and is counted in Failures.
type Reranked struct {
	Hybrid   Hybrid
	Rows     map[string]rowcall.Row
	Reranker rerank.Agent
	Failures int
}

// StandIns are the stand-in model's ways of scoring a candidate from the
// question and the candidate's line, with the embedded encoder; to each
// score it adds prior × (1 − position/20), the order it was given (which a
// model sees too), and ties keep that order.
//
//	line    the cosine of the question with the candidate's whole line, its
//	        key's words included ("stripe refund charge: Refund …")
//	fields  the larger cosine of the question with WHAT and with WHEN_TO_USE, each alone
var StandIns = []string{"line", "fields"}

// The stand-in and prior chosen on the tune split (docs/benchmarks.md).
const (
	ChosenStandIn = "fields"
	ChosenPrior   = 1.5
)

// NewReranked builds the rerank path in dir (its own database holding only
// the rerank row, so the row is not a candidate of the dev set's ask) and
// starts the stand-in model; close stops both.
func NewReranked(ctx context.Context, h Hybrid, rows []rowcall.Row, standIn string, prior float64, dir string) (r *Reranked, close func(), err error) {
	if !slices.Contains(StandIns, standIn) {
		return nil, nil, fmt.Errorf("stand-in %q is unknown; they are %s", standIn, strings.Join(StandIns, ", "))
	}
	row := rowcall.NewRow("ASK_RERANK", rowcall.TypeAgent)
	row.Target, row.Category = "standin:rerank", "system"
	row.Content = "# WHAT: Reorders ask's best candidates for a question\n" + rerank.Prompt
	store, db, err := NewStore(ctx, dir, []rowcall.Row{row})
	if err != nil {
		return nil, nil, err
	}
	signer, err := ledger.NewSigner(make([]byte, 32))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	receipts := sqlstore.NewReceiptLog(store, signer)
	ms := modelserver.New()
	m := &standInModel{enc: h.Enc, how: standIn, prior: prior, vecs: map[string][]float32{}}
	ms.Fallback(m.answer)
	d := &dispatch.Dispatcher{Store: store, Receipts: receipts, Env: rowcall.EnvFunc(func(string) (string, bool) { return "", false }),
		Runners: map[rowcall.Type]rowcall.Runner{rowcall.TypeAgent: agent.New(agent.Config{
			Client: &http.Client{}, Providers: map[string]agent.Provider{"standin": {BaseURL: ms.URL, NoTools: true}},
			Rows: store, Retries: -1})}}
	byKey := make(map[string]rowcall.Row, len(rows))
	for _, r := range rows {
		byKey[r.Key] = r
	}
	r = &Reranked{Hybrid: h, Rows: byKey, Reranker: rerank.Agent{Dispatcher: d, Key: row.Key}}
	return r, func() { ms.Close(); receipts.Close(); db.Close() }, nil
}

// Rank implements Ranker: the hosts' ranking (vectors.Ranker) with the
// rerank row reordering its best vectors.RerankDepth, as a host runs it.
func (r *Reranked) Rank(ctx context.Context, query string) ([]string, error) {
	rk := r.Hybrid.Ranker()
	rk.Reranker = counted{r}
	hits, err := rk.Search(ctx, query, rowcall.SearchFilter{Limit: Depth, For: &rowcall.Asker{Owner: true}})
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.Row.Key)
	}
	return out, err
}

// counted is r's Reranker, counting its failures (the ranking keeps its own
// order when the rerank fails).
type counted struct{ r *Reranked }

func (c counted) Rerank(ctx context.Context, query string, hits []rowcall.Hit, who rowcall.Asker) ([]rowcall.Hit, error) {
	got, err := c.r.Reranker.Rerank(ctx, query, hits, who)
	if err != nil {
		c.r.Failures++
	}
	return got, err
}

// standInModel answers rerank requests as StandIns says.
type standInModel struct {
	enc   Embedder
	how   string
	prior float64
	mu    sync.Mutex
	vecs  map[string][]float32
}

func (m *standInModel) embed(texts []string) [][]float32 {
	m.mu.Lock()
	var todo []string
	for _, t := range texts {
		if _, ok := m.vecs[t]; !ok && !slices.Contains(todo, t) {
			todo = append(todo, t)
		}
	}
	m.mu.Unlock()
	vs := m.enc.EmbedBatch(todo)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, t := range todo {
		m.vecs[t] = vs[i]
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = m.vecs[t]
	}
	return out
}

func (m *standInModel) answer(req modelserver.Request) modelserver.Reply {
	msgs := req.Chat.Messages
	if len(msgs) == 0 {
		return modelserver.Reply{Content: "no question"}
	}
	lines := strings.Split(strings.TrimSpace(msgs[len(msgs)-1].Text()), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "Question: ") {
		return modelserver.Reply{Content: "I cannot read this request."}
	}
	q := strings.TrimPrefix(lines[0], "Question: ")
	type cand struct {
		key   string
		score float64
	}
	var cands []cand
	var texts [][]string // per candidate: the texts its score compares with the question
	for _, l := range lines[1:] {
		key, text, ok := strings.Cut(l, ": ")
		if !ok || l == "Candidates:" {
			continue
		}
		cands = append(cands, cand{key: key})
		switch m.how {
		case "line":
			texts = append(texts, []string{strings.ToLower(strings.ReplaceAll(key, "_", " ")) + ": " + text})
		case "fields":
			what, when, ok := strings.Cut(text, " Use when: ")
			if !ok {
				texts = append(texts, []string{what})
			} else {
				texts = append(texts, []string{what, when})
			}
		}
	}
	all := []string{q}
	for _, ts := range texts {
		all = append(all, ts...)
	}
	vs := m.embed(all)
	qv, next := vs[0], 1
	for i := range cands {
		best := -2.0
		for range texts[i] {
			best = max(best, dot(qv, vs[next]))
			next++
		}
		cands[i].score = best + m.prior*(1-float64(i)/float64(rerank.DefaultMax))
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	var b strings.Builder
	for _, c := range cands {
		b.WriteString(c.key + "\n")
	}
	return modelserver.Reply{Content: b.String()}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
