package rowcall

import (
	"context"
	"strings"
)

// Runner executes one row of one type. It never returns a Go error for a failed
// call: a failure is an Output whose Fail is set (and whose Result is Fail's
// rendering, the seed's "ERR:…" text), so a caller always gets a receipt-able
// answer.
type Runner interface {
	Run(ctx context.Context, inv *Invocation) Output
}

// MaxDepth is the one nesting limit: calls nest at most MaxDepth deep (an
// Invocation's Depth counts from 0 for a top-level call). The dispatcher
// refuses a nested call deeper than it, and the flow runner refuses to run at
// it (its steps would be deeper), each with its literal depth_exceeded
// failure. Calls of a host's own API through $SELF start a new top-level call
// and are bounded separately (outbound.MaxSelfDepth); agents inside agents
// have their own, smaller limit (agent.MaxAgentNest).
const MaxDepth = 8

// Invocation is one call of one row, as a runner sees it.
type Invocation struct {
	Row   *Row
	Body  string            // the raw argument string
	Args  []string          // Body split on '|'
	Vars  map[string]string // named values without '$': "PREV" and flow bindings
	Shape bool              // build the outbound request and return it in Plan; send nothing
	Trace string            // shared by an invocation and every nested call it makes
	Depth int               // nesting depth: 0 for a top-level call
	Env   Env               // where credential values are read, at call time
	Calls Caller            // runs nested calls (flow steps, agent tool calls)

	// Module is, for an fn row, the digest of the module its target resolved to
	// when the dispatcher fingerprinted the contract ("" when unknown): the fn
	// runner runs exactly that code without resolving the target again.
	Module string
}

// Output is what a runner returns.
type Output struct {
	Result   string   // the answer as text; on failure Fail's rendering (set by Failure.Output or Fails)
	Fail     *Failure // the failure, nil for a success
	Plan     any      // shape mode: the request that would have been sent (credentials redacted)
	Status   int      // the upstream HTTP status, when there was one (the breaker counts 401/403)
	Material bool     // the call really ran (code executed or an upstream answered)
	CostUSD  float64  // what the call cost, when a runner knows
	Secrets  []string // credential values the runner injected: redacted from anything that is kept

	// MCPContent marks a Result that is an MCP tool's answer in MCP's own
	// JSON, {"content":[…],"structuredContent":…} (runners/mcpcall: content
	// that is not only text, or structured content). The MCP server answers
	// its content blocks and structured content as they are; every other
	// caller gets the JSON text. The receipt fingerprints that text, so it
	// covers both.
	MCPContent bool
}

// Failed reports whether the output is a failure.
func (o Output) Failed() bool { return o.Fail != nil }

// Fails makes o the failure f, keeping o's other fields (Status, Secrets, …).
func (o *Output) Fails(f *Failure) {
	o.Fail, o.Result = f, f.String()
}

// Caller runs a nested call of another row on behalf of parent: same trace, same
// actor and gate, one level deeper, with its own receipt.
type Caller interface {
	Call(ctx context.Context, parent *Invocation, key, body string) Output
}

// Purse is implemented by a Caller whose call tree is charged to a USD
// budget (the dispatcher's, for a token with budget_usd_day or
// budget_usd_month). A runner calls Reserve before each paid request it
// makes (an agent's model request), with what prices it (the price table's
// entry; "" when it is not priced), and, once it is answered, paid with
// what it cost. Reserve refuses, with budget_exhausted:<spent>>=<cap>,
// once the token's spend has reached its cap: its receipts', what calls in
// flight have paid so far, and the estimates their requests in flight hold.
type Purse interface {
	Reserve(ctx context.Context, price string) (paid func(costUSD float64), refused *Error)
}

// Env reads credential values by environment-variable name. Values are read at
// call time and never stored.
type Env interface {
	Lookup(name string) (string, bool)
}

// EnvFunc adapts a function (such as os.LookupEnv) to Env.
type EnvFunc func(name string) (string, bool)

// Lookup calls f.
func (f EnvFunc) Lookup(name string) (string, bool) { return f(name) }

// SettingOn reports whether the value of a yes-or-no setting (such as
// ROWCALL_PUBLIC_READS: the host's environment, the worker's vars) means yes:
// 1, true, yes or on, in any case. Anything else, or nothing, means no.
func SettingOn(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
