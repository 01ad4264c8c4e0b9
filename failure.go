package rowcall

import "strings"

// Failure is a call that failed, as a value: who failed (Kind), a stable code,
// its dynamic parts and its prose. Runners and the dispatcher return one in
// Output.Fail; nothing inside rowcall reads a failure back out of a string.
// String renders the seed's literal "ERR:…" text, the one place that text is
// made:
//
//	ERR:<kind>:<code>[:<arg>…][:<cause>][ — <detail>]
//
// e.g. Fail("fn", "timeout", "caller_deadline") is "ERR:fn:timeout:caller_deadline"
// and Fail("agent", "empty").Because("the model answered …") is
// "ERR:agent:empty — the model answered …". A failure the dispatcher reports
// on its own (breaker_open, unknown_key) has no kind: "ERR:breaker_open:KEY — …".
type Failure struct {
	Kind   string   // the runner or layer: fn, http, flow, agent, gate, dispatch, auth; "" for a dispatcher code that stands alone
	Code   string   // stable within Kind: timeout, bad_target, 401, no_runner, token_revoked, …
	Args   []string // dynamic parts (a key, a limit, an upstream body), each rendered after ':'
	Cause  *Failure // a failure this one wraps, rendered after the args (ERR:http:KEY:ERR:auth:…)
	Detail string   // prose for a person, rendered after " — "
}

// Fail returns the failure kind:code with args.
func Fail(kind, code string, args ...string) *Failure {
	return &Failure{Kind: kind, Code: code, Args: args}
}

// Because sets f's prose and returns f.
func (f *Failure) Because(detail string) *Failure {
	f.Detail = detail
	return f
}

// Wrapping sets the failure f wraps and returns f.
func (f *Failure) Wrapping(cause *Failure) *Failure {
	f.Cause = cause
	return f
}

// Output is the runner output for f: its Result is f's rendering.
func (f *Failure) Output() Output { return Output{Result: f.String(), Fail: f} }

// String renders f as the seed's literal ERR: text ("" for nil: no failure).
func (f *Failure) String() string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("ERR:")
	if f.Kind != "" {
		b.WriteString(f.Kind)
		b.WriteByte(':')
	}
	b.WriteString(f.Code)
	for _, a := range f.Args {
		b.WriteByte(':')
		b.WriteString(a)
	}
	if f.Cause != nil {
		b.WriteByte(':')
		b.WriteString(f.Cause.String())
	}
	if f.Detail != "" {
		b.WriteString(" — ")
		b.WriteString(f.Detail)
	}
	return b.String()
}

// Outcome is the receipt's short outcome for f, never a body: ERR:<kind>:<code>
// (ERR:http:401, ERR:fn:timeout, ERR:gate:token_revoked); a failure with no kind
// names its first argument, the key, in the kind's place (ERR:breaker_open:KEY).
func (f *Failure) Outcome() string {
	if f.Kind != "" {
		return "ERR:" + f.Kind + ":" + f.Code
	}
	if len(f.Args) == 0 {
		return "ERR:" + f.Code
	}
	return "ERR:" + f.Code + ":" + f.Args[0]
}

// Map returns a copy of f with fn applied to every dynamic part (its args, its
// cause's and its detail): how credential values are redacted from a failure.
func (f *Failure) Map(fn func(string) string) *Failure {
	if f == nil {
		return nil
	}
	g := *f
	g.Args = make([]string, len(f.Args))
	for i, a := range f.Args {
		g.Args[i] = fn(a)
	}
	g.Cause = f.Cause.Map(fn)
	g.Detail = fn(f.Detail)
	return &g
}
