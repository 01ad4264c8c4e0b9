// Package agent is the runner for agent rows: it sends a row's prompt to a
// model through an OpenAI-compatible chat completions API, and runs the
// capabilities the model calls — by [KEY]args[/KEY] tag in its text, or by
// native tool call — feeding their results back until it answers.
//
// # Request
//
// The row's target is a model id. "NAME:MODEL", where NAME is a provider the
// operator configured (Config.Providers, the host's --model-provider
// NAME=URL), sends MODEL to that provider: gw:openai/gpt-4.1-mini sends
// "openai/gpt-4.1-mini" to the provider named gw. Any other target
// (grok-4.3, or an id with a ':' of its own) is sent whole to the default
// provider (Config.DefaultProvider; the only provider when just one is
// configured). Requests are POST {BaseURL}/chat/completions with
// {"model","messages","stream":false} and, when offered, "tools".
//
// The system message is the composed prompt: the payload (content without its
// '#' documentation lines, as everywhere in rowcall — so a prompt's headings
// must not start with '#') of each row named in includes (comma-separated
// keys, in order), then the row's own payload, joined by blank lines. A block
// row that is disabled (enabled = 0) is left out, which is how an operator
// switches a shared block off; a block that does not exist stops the call.
// Blocks' own includes are not expanded. No system message is sent when the
// composition is empty. The call's argument string (the whole body, pipes
// and all) is the user message.
//
// The credential comes from the row's auth column, read from Invocation.Env
// at call time, with the same forms and rules as http rows (bearer:ENV,
// basic:ENV, headers:{…}, query:param=ENV; see package httpcall); oauth: is
// refused. A missing variable sends no credential, and the provider's 401 is
// the signal. Every value read is listed in Output.Secrets and redacted from
// the result.
//
// # The router
//
// Each model answer is one round. The calls an answer makes are its native
// tool calls, then the [KEY]args[/KEY] tags in its text: KEY follows the key
// rule, the args are the text up to the first [/KEY] (trimmed), an opening
// tag with no closing tag is prose, and [REPLY]…[/REPLY] is never a call
// (tags inside it are text). An answer that makes calls has them run, in
// order, through Invocation.Calls — the dispatcher's nested call: same
// trace, actor and gate, one level deeper, its own receipt whose parent is
// the agent's — and the results are fed back: a role "tool" message per
// tool call, and one user message for the tags:
//
//	Results of the calls you made, in order:
//	[RESULT KEY]
//	<result>
//	[/RESULT KEY]
//
// each result cut to Config.MaxResult bytes. The first answer that makes no
// call ends the loop, and its whole text is the result, [REPLY] tags and all
// (the seed's BLOOIO_FINISH extracts the last [REPLY] from the agent's full
// output, as the last_reply_of example module does). A [REPLY] in an answer that also makes
// calls does not end the loop. An answer still making calls at round
// Config.MaxRounds (default 6) ends the call with ERR:agent:round_limit, and
// its calls do not run. One answer may make Config.MaxCalls calls (default
// 8); the rest are answered with ERR:agent:too_many_calls.
//
// Allowed categories. An agent may call only rows whose category is in its
// allowed_categories: a comma-separated list of exact category names, or "*"
// for every row. An empty allowed_categories allows nothing — a plain chat
// agent such as the seed's PROMPT_LAB_AGENT needs no calls, and a row must be
// given reach explicitly. A call outside is refused before anything runs
// and the model is told why, in words that neither confirm the row exists
// nor name its category:
//
//	ERR:agent:not_allowed:<KEY> — this agent may call only rows in the categories <a>, <b> (its allowed_categories), and <KEY> is not one of them; nothing ran
//	ERR:agent:not_allowed:<KEY> — this agent's allowed_categories is empty, so it may call no rows; nothing ran
//
// With "*", a key that is not in the directory gets ERR:unknown_key:<KEY>, as
// any nested call does; a disabled row, the dispatcher's
// ERR:row_disabled:<KEY>. Everything that runs goes through the dispatcher,
// so a capability token's scope, pins and ceilings hold for an agent's calls
// as for its caller's. When the Caller also implements Scoper, rows outside
// the caller's scope are not offered as tools and are answered as unknown.
//
// Native tools. Unless the provider is configured NoTools (",no-tools" on the
// flag), the rows the agent may call are offered as function tools: enabled,
// planner_visible rows from its categories (Config.Catalog), not the agent
// itself, whose key is a valid function name (^[A-Za-z0-9_-]{1,64}$), ranked
// by planner_rank then key, at most Config.MaxTools (default 32). A row with
// an input_schema (a JSON Schema object with properties) is offered with it
// as the parameters, and a call's arguments become the argument string by
// the schema's declared property order ({"latitude":37.77,"longitude":-122.42}
// → "37.77|-122.42"); a row without one takes one string parameter "args",
// the argument string itself. The tool name is the key; a tool call is
// checked against allowed_categories exactly as a tag is. Arguments are made
// the body by typed.Body, the rule MCP uses too; what it refuses (not a JSON
// object, a name the row does not take, a '|' before the last argument) is
// answered with ERR:agent:bad_tool_arguments:<KEY>.
//
// Bounds across calls: agents nested in one another (an agent calling an
// agent through the dispatcher) share a budget of Config.MaxRequests model
// requests (default 64), may nest MaxAgentNest deep, and an agent that is
// already running in the chain is refused (ERR:agent:cycle:A>B>A).
//
// # Cost
//
// Output.CostUSD is the token usage the provider reported, summed over
// rounds, priced from Config.Prices (USD per million prompt and completion
// tokens, looked up by the row's target, then by the model id sent; a model
// with no price costs 0), plus the CostUSD of every call the agent made, as
// a flow counts its steps.
//
// When the call is charged to a USD budget (Invocation.Calls implements
// rowcall.Purse: a token with budget_usd_day or budget_usd_month), every
// model request is reserved from it first, with its price table entry, and
// paid with its round's priced usage once answered; a refused reservation
// ends the call, nested agents' included, before the request goes out:
// ERR:gate:budget_exhausted:<spent>>=<cap> — ….
//
// # Failures
//
// A 429 or 5xx answer is retried Config.Retries times (default 2) after a
// wait: the provider's retry-after-ms or Retry-After plus up to a tenth of it
// as jitter, or else RetryBase (500 ms) doubled per attempt, capped at
// RetryMax (10 s), with equal jitter. A Retry-After longer than RetryMax is
// not waited for. Output.Status is the provider's last HTTP status, so a
// 401 or 403 counts toward the dispatcher's breaker (8 in a row:
// ERR:breaker_open:<KEY>) and a success resets it; Material is true once the
// provider has answered.
//
//	ERR:agent:<status>:<message>     the provider answered an error; message is its
//	                                 error.message (or body); 429/5xx after the
//	                                 retries add "(gave up after N attempts)"
//	ERR:agent:timeout:<limit> — …    one request took longer than Config.Timeout (120 s)
//	ERR:agent:fetch:<message>        no answer: refused, DNS, TLS, outbound policy
//	ERR:agent:bad_response:<message> a 2xx body that is not a chat completion
//	                                 (malformed JSON, no choices, an error object)
//	ERR:agent:too_large:<limit> bytes — …   an answer over Config.MaxResponse (4 MiB)
//	ERR:agent:empty — …              an answer with no text and no calls
//	ERR:agent:refused:<refusal>      the model refused (message.refusal)
//	ERR:agent:round_limit:<n> — …    still calling capabilities after n rounds
//	ERR:agent:budget:<n> … — …       the call tree used its n model requests
//	ERR:gate:budget_exhausted:<spent>>=<cap> — …  the token's USD budget is spent (Cost)
//	ERR:agent:cycle:<A>B>A> — …      an agent reached itself again
//	ERR:agent:too_deep:<chain> — …   agents nested more than MaxAgentNest deep
//	ERR:agent:canceled:<reason>      the caller went away
//	ERR:agent:no_provider:<target> — …   no provider serves the target
//	ERR:agent:bad_target:<message>   an empty target
//	ERR:agent:auth:<why>             unknown_prefix:<p>, bad_spec:<msg> or unsupported:oauth
//	ERR:agent:include_missing:<KEY> — …  includes names a row that does not exist
//	ERR:agent:includes:<…>           too_many:<n>, or a directory read failure
//
// # Shape mode
//
// With Invocation.Shape the runner composes the first request and sends
// nothing: Output.Plan is {"method","url","headers","body"} with the auth
// column's headers left out and every credential value redacted, and the
// result is SHAPE:agent:POST <url>.
//
// The runner takes its transport from Config.Client (the host passes the
// outbound policy's client) and builds for GOOS=js GOARCH=wasm.
package agent
