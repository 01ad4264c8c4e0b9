// Package rerank reorders ask's best candidates by a model, through an agent
// row the operator names (ROWCALL_ASK_RERANK=KEY; off when unset). The call
// is a dispatch of that row with the owner's authority (the row is the
// operator's, in no token's scope), with actor "ask_rerank", made for who
// asked and charged to them:
//
//   - the owner: as the owner's own call;
//   - a token's holder: to the token (dispatch.Request.Payer): its rate,
//     calls per day and USD budgets gate the rerank as any call of the
//     token, the receipt carries its token id, and the spend counts in its
//     budget;
//   - anonymous (a public read): refused, unless the operator set Anonymous
//     (ROWCALL_ASK_RERANK_ANONYMOUS=N/minute): every anonymous rerank is then
//     charged to that one rate, shared by all anonymous callers (and by the
//     hosts on one database), with receipts of token id AnonymousID.
//
// A rerank refused (anonymous, or over the limits) leaves the ranking as it
// was: Rerank returns the hits unchanged and no error, since ask answers
// without its optional rerank.
//
//	r := rerank.Agent{Dispatcher: d, Key: "ASK_RERANK"}
//	hits, err := r.Rerank(ctx, "give the buyer their money back", hits, rowcall.Asker{Token: tok}) // err: logged, hits still usable
//
// The row's user message (its call body) is the question and the first Max
// candidates, one a line, with what their docstrings say:
//
//	Question: give the buyer their money back
//	Candidates:
//	STRIPE_REFUND_CHARGE: Refund a card charge in full or in part. Use when: a customer is owed money back.
//	STRIPE_EXPORT_REFUNDS: Export refunds older than 90 days to a CSV report.
//
// and its answer is the keys, best first, one a line (Prompt is the system
// prompt that asks for exactly that; docs/finding.md shows the whole row). The
// answer is read leniently: every candidate key found in it as a whole word,
// in order of first appearance, comes first; the candidates it does not name
// follow in their original order, and so do the hits after the first Max.
// An answer that names no candidate, a failed call, or no answer within
// Timeout leaves the order as it was: Rerank then returns the hits unchanged
// together with the error, so a caller that only logs the error still
// answers ask.
package rerank

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
)

// Defaults for Agent's zero values.
const (
	DefaultMax     = 20               // candidates sent to the model
	DefaultTimeout = 10 * time.Second // the whole rerank call, receipt included
)

// Prompt is the system prompt of a rerank row: it asks for the answer format
// Rerank reads.
const Prompt = `You rank capabilities for a question. The user message is a question, then candidate capabilities, one a line: KEY: what it does. Use when: when to use it.
Answer with the keys of the candidates that fit the question, one a line, the best fit first. Write only keys: no numbers, no explanations.`

// Dispatcher runs a row (*dispatch.Dispatcher is one).
type Dispatcher interface {
	Dispatch(ctx context.Context, req dispatch.Request) (dispatch.Result, error)
}

// Agent is a rowcall.Reranker that calls the row Key.
type Agent struct {
	Dispatcher Dispatcher
	Key        string
	Max        int           // 0: DefaultMax
	Timeout    time.Duration // 0: DefaultTimeout
	// Anonymous is what anonymous callers' reranks are charged to (Anon);
	// nil: they are not reranked.
	Anonymous *rowcall.Token
}

// AnonymousID is the token id anonymous callers' reranks are charged to and
// recorded under.
const AnonymousID = "anonymous"

// Anon is the payer of anonymous callers' reranks at rate ("N/minute", as a
// token's; the operator's ROWCALL_ASK_RERANK_ANONYMOUS), or nil when rate is
// "" (they are not reranked). The error says what a rate takes.
func Anon(rate string) (*rowcall.Token, error) {
	if rate == "" {
		return nil, nil
	}
	lim := rowcall.Limits{Rate: rate}
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	return &rowcall.Token{ID: AnonymousID, Limits: lim}, nil
}

var _ rowcall.Reranker = Agent{}

// Actor is the receipts' actor of rerank calls.
const Actor = "ask_rerank"

// Rerank implements rowcall.Reranker; on any failure it returns hits as they
// were, with the error, and a rerank refused for who (see the package doc)
// returns them with none.
func (a Agent) Rerank(ctx context.Context, query string, hits []rowcall.Hit, who rowcall.Asker) ([]rowcall.Hit, error) {
	req := dispatch.Request{Key: a.Key, Principal: rowcall.Principal{Actor: Actor}, Payer: who.Token}
	if who.Token != nil && who.Token.State(time.Now()) != rowcall.TokenLive {
		return hits, nil // revoked or expired since the session began: charged nothing
	}
	if !who.Owner && who.Token == nil {
		if a.Anonymous == nil {
			return hits, nil
		}
		req.Payer = a.Anonymous
	}
	n := min(len(hits), a.Max)
	if a.Max <= 0 {
		n = min(len(hits), DefaultMax)
	}
	if n < 2 {
		return hits, nil
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req.Body = Body(query, hits[:n])
	res, err := a.Dispatcher.Dispatch(ctx, req)
	if code := rowcall.ErrorCode(err); code == rowcall.ERateLimited || code == rowcall.EBudgetExhausted {
		slog.Debug("rerank refused for its payer; keeping the order", "key", a.Key, "payer", req.Payer.ID, "reason", err)
		return hits, nil
	}
	if err != nil {
		return hits, fmt.Errorf("rerank by %s: %w", a.Key, err)
	}
	if err := res.Wait(); err != nil {
		return hits, fmt.Errorf("rerank by %s: its receipt: %w", a.Key, err)
	}
	if !res.OK {
		return hits, fmt.Errorf("rerank by %s failed (kept the order): %s", a.Key, res.Result)
	}
	order, ok := Order(res.Result, hits[:n])
	if !ok {
		return hits, fmt.Errorf("rerank by %s: the answer names no candidate (kept the order): %.200q", a.Key, res.Result)
	}
	return append(order, hits[n:]...), nil
}

// Body is the rerank row's call body for query and the candidates.
func Body(query string, hits []rowcall.Hit) string {
	var b strings.Builder
	b.WriteString("Question: " + oneLine(query) + "\nCandidates:\n")
	for _, h := range hits {
		b.WriteString(h.Row.Key + ": " + oneLine(h.Row.Description()))
		if when := h.Row.DocLine("WHEN_TO_USE"); when != "" {
			b.WriteString(" Use when: " + oneLine(when))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Order reorders hits by the keys answer names (whole words, first
// appearance), the rest after in their order; ok is false when it names
// none.
func Order(answer string, hits []rowcall.Hit) (out []rowcall.Hit, ok bool) {
	pos := make(map[string]int, len(hits))
	for i, h := range hits {
		pos[h.Row.Key] = i
	}
	used := make([]bool, len(hits))
	isKey := func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	for _, w := range strings.FieldsFunc(answer, func(r rune) bool { return !isKey(r) }) {
		i, found := pos[w]
		if !found {
			i, found = pos[strings.Trim(w, ".-")] // "KEY." ending a sentence
		}
		if !found || used[i] {
			continue
		}
		used[i] = true
		out = append(out, hits[i])
	}
	if len(out) == 0 {
		return hits, false
	}
	for i, h := range hits {
		if !used[i] {
			out = append(out, h)
		}
	}
	return out, true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
