package rerank_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/rerank"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/runners/agent"
	"github.com/rowcall/rowcall/test/modelserver"
)

const modelKey = "sk-rerank-test-6a1f0c9e2d"

// setup returns a dispatcher whose agent rows talk to a stand-in model
// server, with the rerank row ASK_RERANK (the documented prompt) in its
// directory, and the candidates a ranking would pass.
func setup(t *testing.T) (*dispatch.Dispatcher, *modelserver.Server, []rowcall.Hit) {
	t.Helper()
	ms := modelserver.Start(t)
	ms.Key = modelKey
	d := testenv.Dispatcher(t, map[rowcall.Type]rowcall.Runner{rowcall.TypeAgent: agent.New(agent.Config{
		Providers: map[string]agent.Provider{"local": {BaseURL: ms.URL}}, Retries: -1})})
	d.Store.(interface {
		Create(context.Context, rowcall.Row) (rowcall.Row, error)
	}).Create(context.Background(), rowcall.Row{Key: "ASK_RERANK", Type: rowcall.TypeAgent, Target: "rank-model",
		Auth: "bearer:MODEL_KEY", Category: "system", Enabled: 1,
		Content: "# WHAT: Reorders ask's best candidates for a question\n" + rerank.Prompt})
	d.Env = rowcall.EnvFunc(func(n string) (string, bool) { return modelKey, n == "MODEL_KEY" })
	var hits []rowcall.Hit
	for _, r := range [][3]string{
		{"STRIPE_EXPORT_REFUNDS", "Export refunds older than 90 days to a CSV report.", ""},
		{"STRIPE_REFUND_CHARGE", "Refund a card charge in full or in part.", "a customer is owed money back"},
		{"SHOPIFY_CANCEL_ORDER", "Cancel an order before it ships.", "the buyer changed their mind"},
	} {
		content := "# WHAT: " + r[1]
		if r[2] != "" {
			content += "\n# WHEN_TO_USE: " + r[2]
		}
		hits = append(hits, rowcall.Hit{Row: rowcall.Row{Key: r[0], Type: rowcall.TypeHTTP, Content: content}})
	}
	return d, ms, hits
}

func keys(hits []rowcall.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Row.Key)
	}
	return out
}

// receipts are the rerank row's receipts.
func receipts(t *testing.T, d *dispatch.Dispatcher) []rowcall.Receipt {
	t.Helper()
	rs, err := d.Store.(interface {
		Receipts(context.Context, int64, int) ([]rowcall.Receipt, error)
	}).Receipts(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []rowcall.Receipt
	for _, r := range rs {
		if r.Key == "ASK_RERANK" {
			out = append(out, r)
		}
	}
	return out
}

// The model's answer decides the order; candidates it leaves out follow in
// their order; the call is a dispatch of the row with its receipt, and the
// model saw the documented prompt, the question and every candidate.
func TestRerankReordersByTheModel(t *testing.T) {
	d, ms, hits := setup(t)
	ms.Script(modelserver.Reply{Content: "SHOPIFY_CANCEL_ORDER\nSTRIPE_REFUND_CHARGE."})
	got, err := rerank.Agent{Dispatcher: d, Key: "ASK_RERANK"}.Rerank(context.Background(), "give the buyer their money back", hits, rowcall.Asker{Owner: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"SHOPIFY_CANCEL_ORDER", "STRIPE_REFUND_CHARGE", "STRIPE_EXPORT_REFUNDS"}; !slices.Equal(keys(got), want) {
		t.Fatalf("order %v, want %v", keys(got), want)
	}
	reqs := ms.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer "+modelKey || reqs[0].Chat.Model != "rank-model" {
		t.Fatalf("requests %+v", reqs)
	}
	msgs := reqs[0].Chat.Messages
	wantUser := "Question: give the buyer their money back\nCandidates:\n" +
		"STRIPE_EXPORT_REFUNDS: Export refunds older than 90 days to a CSV report.\n" +
		"STRIPE_REFUND_CHARGE: Refund a card charge in full or in part. Use when: a customer is owed money back\n" +
		"SHOPIFY_CANCEL_ORDER: Cancel an order before it ships. Use when: the buyer changed their mind\n"
	if len(msgs) != 2 || msgs[0].Text() != rerank.Prompt || msgs[1].Text() != wantUser {
		for _, m := range msgs {
			t.Logf("%s: %q", m.Role, m.Text())
		}
		t.Fatal("the messages are not the prompt and the body")
	}
	rs := receipts(t, d)
	if len(rs) != 1 || !rs[0].OK || rs[0].Actor != rerank.Actor || rs[0].Type != rowcall.TypeAgent {
		t.Fatalf("receipts %+v", rs)
	}
}

// Every failure keeps the order it was given, and says why.
func TestRerankFallsBack(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply modelserver.Reply
		key   string
		want  string
	}{
		{"junk", modelserver.Reply{Content: "I think the second one, probably."}, "ASK_RERANK", "names no candidate"},
		{"model error", modelserver.Reply{Status: 500}, "ASK_RERANK", "ERR:agent:500"},
		{"timeout", modelserver.Reply{Content: "STRIPE_REFUND_CHARGE", Delay: time.Minute}, "ASK_RERANK", "ERR:agent:canceled"},
		{"no such row", modelserver.Reply{}, "NO_SUCH_RERANK", "unknown_key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, ms, hits := setup(t)
			ms.Script(c.reply)
			start := time.Now()
			got, err := rerank.Agent{Dispatcher: d, Key: c.key, Timeout: 200 * time.Millisecond}.Rerank(context.Background(), "refund", hits, rowcall.Asker{Owner: true})
			if !slices.Equal(keys(got), keys(hits)) {
				t.Fatalf("order %v, want the original %v", keys(got), keys(hits))
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if time.Since(start) > 30*time.Second {
				t.Fatalf("the rerank took %v: its timeout did not hold", time.Since(start))
			}
			if c.key == "ASK_RERANK" {
				// a junk answer is a call that worked; the others failed
				if rs := receipts(t, d); len(rs) != 1 || rs[0].OK != (c.name == "junk") {
					t.Fatalf("receipts %+v, want one", rs)
				}
			}
		})
	}
}

func TestOrder(t *testing.T) {
	hits := []rowcall.Hit{{Row: rowcall.Row{Key: "A_ONE"}}, {Row: rowcall.Row{Key: "B.TWO"}}, {Row: rowcall.Row{Key: "C-3"}}}
	for answer, want := range map[string]string{
		"1. C-3\n2. A_ONE":            "C-3 A_ONE B.TWO",
		"`B.TWO`, then B.TWO, A_ONE.": "B.TWO A_ONE C-3",
		"[REPLY]C-3[/REPLY]":          "C-3 A_ONE B.TWO",
		"A_ONES C-30":                 "",
	} {
		got, ok := rerank.Order(answer, hits)
		if strings.Join(keys(got), " ") != want && !(want == "" && !ok && slices.Equal(got, hits)) {
			t.Errorf("Order(%q) = %v %v, want %q", answer, keys(got), ok, want)
		}
	}
}

// docs/finding.md shows the rerank row with this package's Prompt.
func TestDocsShowPrompt(t *testing.T) {
	b, err := os.ReadFile("../../docs/finding.md")
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(rerank.Prompt) // the row's content is JSON in the example
	if !strings.Contains(string(b), strings.Trim(string(js), `"`)) {
		t.Fatal("docs/finding.md does not show rerank.Prompt as the rerank row's content")
	}
}
