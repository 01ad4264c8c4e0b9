package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/runners/httpcall"
)

// Defaults for Config's zero values, and fixed bounds.
const (
	DefaultMaxRounds   = 6  // model requests per agent call (retries not counted)
	DefaultMaxCalls    = 8  // calls one answer may make
	DefaultMaxTools    = 32 // rows offered as native tools
	DefaultMaxRequests = 64 // model requests in one call tree (nested agents included)
	DefaultRetries     = 2  // extra attempts after a 429 or 5xx
	DefaultRetryBase   = 500 * time.Millisecond
	DefaultRetryMax    = 10 * time.Second  // the longest wait before a retry; a longer Retry-After is not waited for
	DefaultTimeout     = 120 * time.Second // one model request, connection to last byte
	DefaultMaxResponse = 4 << 20           // bytes of one model answer
	DefaultMaxResult   = 16 << 10          // bytes of one call's result fed back to the model

	MaxAgentNest   = 4 // agents running inside one another in one call tree
	catalogLimit   = 1000
	feedbackHeader = "Results of the calls you made, in order:"
)

// Rows reads the directory: includes' prompt blocks, and the category of a
// row the model calls. *sqlstore.Store satisfies it.
type Rows interface {
	Lookup(ctx context.Context, key string) (rowcall.Row, error)
}

// Catalog lists rows to offer as native tools: enabled rows of one category
// ("" for every category), at most limit of them. It is optional; without it
// only the tag protocol is offered.
type Catalog interface {
	Rows(ctx context.Context, category string, limit int) ([]rowcall.Row, error)
}

// Config configures a Runner.
type Config struct {
	// Client sends every model request. The host passes its outbound policy's
	// client; nil means a plain client.
	Client *http.Client
	// Providers maps a provider name to its endpoint.
	Providers map[string]Provider
	// DefaultProvider serves targets that name no configured provider
	// (grok-4.3). When empty and exactly one provider is configured, that one.
	DefaultProvider string
	// Prices prices token usage into Output.CostUSD; nil prices nothing.
	Prices Prices
	// Rows resolves includes and the rows a model calls (required for both).
	Rows Rows
	// Catalog lists rows to offer as native tools (optional).
	Catalog Catalog

	MaxRounds   int           // 0: DefaultMaxRounds
	MaxCalls    int           // 0: DefaultMaxCalls
	MaxTools    int           // 0: DefaultMaxTools; negative: offer no tools
	MaxRequests int           // 0: DefaultMaxRequests
	Retries     int           // 0: DefaultRetries; negative: no retries
	RetryBase   time.Duration // 0: DefaultRetryBase (the first backoff; doubled each attempt, jittered)
	RetryMax    time.Duration // 0: DefaultRetryMax
	Timeout     time.Duration // 0: DefaultTimeout
	MaxResponse int64         // 0: DefaultMaxResponse
	MaxResult   int           // 0: DefaultMaxResult
	UserAgent   string        // sent when not empty
}

// Runner runs agent rows. It is safe for concurrent use.
type Runner struct {
	client          *http.Client
	providers       map[string]Provider
	defaultProvider string
	prices          Prices
	rows            Rows
	catalog         Catalog
	maxRounds       int
	maxCalls        int
	maxTools        int
	maxRequests     int64
	retries         int
	retryBase       time.Duration
	retryMax        time.Duration
	timeout         time.Duration
	maxResponse     int64
	maxResult       int
	userAgent       string
	sleep           func(ctx context.Context, d time.Duration) error // tests replace it
}

var _ rowcall.Runner = (*Runner)(nil)

// New returns a Runner with cfg, zero fields replaced by their defaults.
func New(cfg Config) *Runner {
	r := &Runner{
		client: cfg.Client, providers: cfg.Providers, defaultProvider: cfg.DefaultProvider, prices: cfg.Prices,
		rows: cfg.Rows, catalog: cfg.Catalog, userAgent: cfg.UserAgent, sleep: sleep,
		maxRounds: orInt(cfg.MaxRounds, DefaultMaxRounds), maxCalls: orInt(cfg.MaxCalls, DefaultMaxCalls),
		maxTools: orInt(cfg.MaxTools, DefaultMaxTools), maxRequests: int64(orInt(cfg.MaxRequests, DefaultMaxRequests)),
		retries: orInt(cfg.Retries, DefaultRetries), retryBase: orDur(cfg.RetryBase, DefaultRetryBase),
		retryMax: orDur(cfg.RetryMax, DefaultRetryMax), timeout: orDur(cfg.Timeout, DefaultTimeout),
		maxResponse: cfg.MaxResponse, maxResult: orInt(cfg.MaxResult, DefaultMaxResult),
	}
	if r.client == nil {
		r.client = &http.Client{}
	}
	if r.providers == nil {
		r.providers = map[string]Provider{}
	}
	if r.defaultProvider == "" && len(r.providers) == 1 {
		for n := range r.providers {
			r.defaultProvider = n
		}
	}
	if r.maxResponse <= 0 {
		r.maxResponse = DefaultMaxResponse
	}
	r.retries = max(r.retries, 0)
	r.maxTools = max(r.maxTools, 0)
	return r
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orDur(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Run executes one invocation of an agent row. Failures are rowcall.Failure values.
func (r *Runner) Run(ctx context.Context, inv *rowcall.Invocation) rowcall.Output {
	if inv == nil || inv.Row == nil {
		return rowcall.Fail("agent", "bad_target", "no row").Output()
	}
	row := inv.Row
	ep, fail := r.resolve(row.Target)
	if fail != nil {
		return fail.Output()
	}
	chain, budget := fromContext(ctx)
	chain = chain[:len(chain):len(chain)] // shared through the context: append must copy
	for _, k := range chain {
		if k == row.Key {
			return rowcall.Fail("agent", "cycle", strings.Join(append(chain, row.Key), ">")).Because("an agent called itself through its calls; nothing was sent").Output()
		}
	}
	if len(chain) >= MaxAgentNest {
		return rowcall.Fail("agent", "too_deep", strings.Join(append(chain, row.Key), ">")).
			Because("agents run at most " + strconv.Itoa(MaxAgentNest) + " inside one another").Output()
	}
	if budget == nil {
		budget = &requestBudget{max: r.maxRequests}
	}
	ctx = withChain(ctx, append(chain, row.Key), budget)

	system, fail := r.compose(ctx, row)
	if fail != nil {
		return fail.Output()
	}
	u, err := url.Parse(ep.url)
	if err != nil {
		return rowcall.Fail("agent", "bad_target", err.Error()).Output()
	}
	headers := http.Header{}
	headers.Set("Content-Type", "application/json")
	headers.Set("Accept", "application/json")
	if r.userAgent != "" {
		headers.Set("User-Agent", r.userAgent)
	}
	cred, authFail := httpcall.ApplyAuth(&http.Request{URL: u, Header: headers}, row.Auth, inv.Env)
	if authFail != nil {
		return rowcall.Fail("agent", "auth", append([]string{authFail.Code}, authFail.Args...)...).Because(authFail.Detail).Output()
	}
	allowed := ParseAllowed(row.AllowedCategories)
	c := &conversation{
		r: r, inv: inv, ep: ep, url: u.String(), headers: headers, allowed: allowed, budget: budget,
		req: chatRequest{Model: ep.model, Tools: r.tools(ctx, row, allowed, ep, inv.Calls)},
	}
	c.price, c.priceName = r.prices.lookup(strings.TrimSpace(row.Target), ep.model)
	c.out.Secrets = cred.Secrets
	if system != "" {
		c.req.Messages = append(c.req.Messages, text("system", system))
	}
	c.req.Messages = append(c.req.Messages, text("user", inv.Body))
	if inv.Shape {
		return c.shape(cred.Headers)
	}
	c.run(ctx)
	c.out.CostUSD += c.price.cost(c.usage)
	c.out.Result = redact.String(c.out.Result, c.out.Secrets)
	c.out.Fail = c.out.Fail.Map(func(s string) string { return redact.String(s, c.out.Secrets) })
	return c.out
}

// compose is the system prompt: the payload (content without its '#'
// documentation lines) of each row named in includes, in order, then the
// row's own payload, separated by blank lines. A disabled block is left out;
// a missing one stops the call.
func (r *Runner) compose(ctx context.Context, row *rowcall.Row) (string, *rowcall.Failure) {
	var parts []string
	keys := row.IncludeKeys()
	if len(keys) > rowcall.MaxIncludes {
		return "", rowcall.Fail("agent", "includes", "too_many", strconv.Itoa(len(keys))).Because("a row includes at most " + strconv.Itoa(rowcall.MaxIncludes) + " blocks")
	}
	for _, k := range keys {
		if r.rows == nil {
			return "", rowcall.Fail("agent", "includes", "no_directory").Because("this host gave the agent runner no directory to read blocks from")
		}
		b, err := r.rows.Lookup(ctx, k)
		if rowcall.ErrorCode(err) == rowcall.ENotFound {
			return "", rowcall.Fail("agent", "include_missing", k).Because("includes names " + k + ", which is not in the directory; create it or take it out of includes")
		}
		if err != nil {
			return "", rowcall.Fail("agent", "includes", k, oneLine(err.Error()))
		}
		if b.Enabled == 0 {
			continue
		}
		if p := b.Payload(); p != "" {
			parts = append(parts, p)
		}
	}
	if p := row.Payload(); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, "\n\n"), nil
}

// tools projects the rows the agent may call as native tools, when the
// provider takes them.
func (r *Runner) tools(ctx context.Context, row *rowcall.Row, allowed Allowed, ep endpoint, calls rowcall.Caller) []tool {
	if ep.provider.NoTools || allowed.None() || r.catalog == nil || r.maxTools == 0 {
		return nil
	}
	cats := allowed.Categories
	if allowed.All {
		cats = []string{""}
	}
	var cands []rowcall.Row
	for _, cat := range cats {
		rows, err := r.catalog.Rows(ctx, cat, catalogLimit)
		if err != nil {
			continue // the tag protocol still reaches them
		}
		for _, c := range rows {
			if allowed.Permits(c.Category) && visible(ctx, calls, c.Key) {
				cands = append(cands, c)
			}
		}
	}
	var out []tool
	for _, c := range rankTools(cands, row.Key, r.maxTools) {
		out = append(out, projectTool(&c))
	}
	return out
}

// conversation is one agent call in progress.
type conversation struct {
	r       *Runner
	inv     *rowcall.Invocation
	ep      endpoint
	url     string
	headers http.Header
	allowed Allowed
	budget  *requestBudget
	req     chatRequest
	usage   usage
	out     rowcall.Output

	price     Price  // what the model costs (zero: no price)
	priceName string // its entry in the price table ("": none)
}

// shape is the shape-mode output: the first request as it would go out,
// without its credentials, and nothing sent.
func (c *conversation) shape(credHeaders []string) rowcall.Output {
	skip := map[string]bool{}
	for _, h := range credHeaders {
		skip[http.CanonicalHeaderKey(h)] = true
	}
	hdr := map[string]any{}
	for k, v := range c.headers {
		if !skip[http.CanonicalHeaderKey(k)] {
			hdr[k] = strings.Join(v, ", ")
		}
	}
	var body any
	b, _ := json.Marshal(c.req)
	json.Unmarshal(b, &body)
	plan := redact.Redact(map[string]any{"method": "POST", "url": c.url, "headers": hdr, "body": body}, c.out.Secrets).(map[string]any)
	return rowcall.Output{Result: "SHAPE:agent:POST " + plan["url"].(string), Plan: plan, Secrets: c.out.Secrets}
}

// run is the router loop: ask the model; run the calls its answer makes
// (tool calls, then [KEY]args[/KEY] tags) and feed their results back; stop
// at the first answer that calls nothing, whose whole text is the result.
// Each model request is reserved first from the budget its call tree is
// charged to (rowcall.Purse), which stops the call once it is spent.
func (c *conversation) run(ctx context.Context) {
	ctx, progress := rowcall.TakeProgress(ctx)
	for round := 1; ; round++ {
		if round > 1 {
			progress(float64(round-1), 0, "model round "+strconv.Itoa(round-1)+" done")
		}
		if n := c.budget.n.Add(1); n > c.budget.max {
			c.out.Fails(rowcall.Fail("agent", "budget", strconv.FormatInt(c.budget.max, 10)+" model requests in this call tree").
				Because("nested agents share the budget; ask for less work per call"))
			return
		}
		paid := func(float64) {}
		if p, ok := c.inv.Calls.(rowcall.Purse); ok { // every model request sees its payer's running spend
			var refused *rowcall.Error
			if paid, refused = p.Reserve(ctx, c.priceName); refused != nil {
				c.out.Fails(refused.Failure("gate"))
				return
			}
		}
		before := c.usage
		ans, fail := c.complete(ctx)
		paid(c.price.cost(usage{PromptTokens: c.usage.PromptTokens - before.PromptTokens,
			CompletionTokens: c.usage.CompletionTokens - before.CompletionTokens}))
		if fail != nil {
			c.out.Fails(fail)
			return
		}
		content := ""
		if ans.Content != nil {
			content = *ans.Content
		}
		tags := Tags(content)
		if len(tags) == 0 && len(ans.ToolCalls) == 0 {
			switch {
			case content == "" && ans.Refusal != nil && *ans.Refusal != "":
				c.out.Fails(rowcall.Fail("agent", "refused", oneLine(*ans.Refusal)))
			case strings.TrimSpace(content) == "":
				c.out.Fails(rowcall.Fail("agent", "empty").Because("the model answered with no text and no calls (round " + strconv.Itoa(round) + ")"))
			default:
				c.out.Result = content
			}
			return
		}
		if round >= c.r.maxRounds {
			c.out.Fails(rowcall.Fail("agent", "round_limit", strconv.Itoa(c.r.maxRounds)).Because("the model was still making calls after " +
				strconv.Itoa(c.r.maxRounds) + " rounds (the last answer's calls did not run); its last text: " + shown(content, maxErrorText, c.out.Secrets)))
			return
		}
		c.feed(ctx, ans, content, tags)
		if err := ctx.Err(); err != nil {
			c.out.Fails(rowcall.Fail("agent", "canceled", err.Error()))
			return
		}
	}
}

// feed runs the calls of one answer and appends the answer and their results
// to the conversation.
func (c *conversation) feed(ctx context.Context, ans answer, content string, tags []Tag) {
	a := message{Role: "assistant", ToolCalls: ans.ToolCalls}
	if content != "" || len(ans.ToolCalls) == 0 {
		a.Content = &content
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i].ID == "" {
			a.ToolCalls[i].ID = "call_" + strconv.Itoa(len(c.req.Messages)) + "_" + strconv.Itoa(i)
		}
		if a.ToolCalls[i].Type == "" {
			a.ToolCalls[i].Type = "function"
		}
	}
	c.req.Messages = append(c.req.Messages, a)
	budget := c.r.maxCalls
	for _, tc := range a.ToolCalls {
		var res string
		switch {
		case budget <= 0:
			res = c.tooMany()
		case tc.Type != "function":
			res = rowcall.Fail("agent", "bad_tool_call", tc.Function.Name).Because("only function tools are offered").String()
		default:
			budget--
			res = c.callTool(ctx, tc)
		}
		c.req.Messages = append(c.req.Messages, text("tool", redact.Clip(res, c.r.maxResult, c.out.Secrets)))
		c.req.Messages[len(c.req.Messages)-1].ToolCallID = tc.ID
	}
	if len(tags) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString(feedbackHeader)
	for _, t := range tags {
		var res string
		if budget <= 0 {
			res = c.tooMany()
		} else {
			budget--
			res = c.call(ctx, t.Key, t.Args)
		}
		b.WriteString("\n[RESULT " + t.Key + "]\n" + redact.Clip(res, c.r.maxResult, c.out.Secrets) + "\n[/RESULT " + t.Key + "]")
	}
	c.req.Messages = append(c.req.Messages, text("user", b.String()))
}

func (c *conversation) tooMany() string {
	return rowcall.Fail("agent", "too_many_calls").Because("one answer may make at most " + strconv.Itoa(c.r.maxCalls) + " calls; this one did not run, make it in your next answer").String()
}

// callTool runs a native tool call: the function name is the row's key.
func (c *conversation) callTool(ctx context.Context, tc toolCall) string {
	row, fail := c.permit(ctx, tc.Function.Name)
	if fail != "" {
		return fail
	}
	body, err := ToolBody(&row, tc.Function.Arguments)
	if err != nil {
		return rowcall.Fail("agent", "bad_tool_arguments", row.Key).Because(err.Error() + "; nothing ran").String()
	}
	return c.dispatch(ctx, row.Key, body)
}

// call runs a [KEY]args[/KEY] tag.
func (c *conversation) call(ctx context.Context, key, body string) string {
	if _, fail := c.permit(ctx, key); fail != "" {
		return fail
	}
	return c.dispatch(ctx, key, body)
}

// permit looks key up and refuses it outside the agent's allowed categories
// (or outside the caller's scope, when the Caller reports one). With "*" a
// missing row is the dispatcher's ERR:unknown_key:<KEY>; with a list it is
// refused like any row outside it.
func (c *conversation) permit(ctx context.Context, key string) (rowcall.Row, string) {
	if c.allowed.None() {
		return rowcall.Row{}, c.allowed.refusal(key)
	}
	if c.r.rows == nil {
		return rowcall.Row{}, rowcall.Fail("agent", "no_directory").Because("this host gave the agent runner no directory, so it cannot check " + key + "; nothing ran").String()
	}
	row, err := c.r.rows.Lookup(ctx, key)
	missing := rowcall.ErrorCode(err) == rowcall.ENotFound || (err == nil && !visible(ctx, c.inv.Calls, key))
	if err != nil && !missing {
		return row, rowcall.Fail("agent", "lookup", key, oneLine(err.Error())).String()
	}
	switch {
	case missing && c.allowed.All:
		return row, rowcall.Fail("", string(rowcall.EUnknownKey), key).String()
	case missing || !c.allowed.Permits(row.Category):
		return row, c.allowed.refusal(key)
	}
	return row, ""
}

// Scoper is implemented by a Caller that knows what its caller may see (a
// capability token's scope). Rows it reports invisible are never offered as
// tools, and a call to one is answered as for a row that does not exist.
type Scoper interface {
	Visible(ctx context.Context, key string) bool
}

func visible(ctx context.Context, calls rowcall.Caller, key string) bool {
	if s, ok := calls.(Scoper); ok {
		return s.Visible(ctx, key)
	}
	return true
}

// dispatch runs one permitted call through the dispatcher: same trace, actor
// and gate, its own receipt.
func (c *conversation) dispatch(ctx context.Context, key, body string) string {
	if c.inv.Calls == nil {
		return rowcall.Fail("agent", "no_caller").Because("this host cannot run nested calls; nothing ran").String()
	}
	o := c.inv.Calls.Call(ctx, c.inv, key, body)
	c.out.CostUSD += o.CostUSD
	c.out.Secrets = append(c.out.Secrets, o.Secrets...)
	return redact.String(o.Result, o.Secrets)
}

// The agent chain and the request budget travel in the context, so agents
// running inside one another (through the dispatcher) share them.
type chainKey struct{}

type chainValue struct {
	keys   []string
	budget *requestBudget
}

type requestBudget struct {
	n   atomic.Int64
	max int64
}

func fromContext(ctx context.Context) ([]string, *requestBudget) {
	if v, ok := ctx.Value(chainKey{}).(chainValue); ok {
		return v.keys, v.budget
	}
	return nil, nil
}

func withChain(ctx context.Context, keys []string, b *requestBudget) context.Context {
	return context.WithValue(ctx, chainKey{}, chainValue{keys: keys, budget: b})
}
