// Package rowcall holds the domain of a capability directory: the types every
// other package shares, and the rules that belong to a row itself.
//
//   - Row is one capability, the directory's whole contract for it (Payload,
//     Description, Hygiene, IncludeKeys, OwnerOnly, RunnerName); ValidKey and
//     KeyRule say what a key may be.
//   - Auth is a parsed auth column: ParseAuth is its only parser, CheckAuth the
//     write rule, ReservedVar and SecretsEnv keep rows away from rowcall's own
//     variables.
//   - Token is a capability token (Covers, MayCall).
//   - Runner runs one row of one Type: Run(ctx, *Invocation) returns an Output,
//     whose Result starts with "ERR:" on failure; Caller runs nested calls and
//     Env reads credentials at call time.
//   - Receipt is the engine's record of one call (Canonical, its RFC 8785 form;
//     Batch, its place in a signed group); Fingerprint and ContractFingerprint
//     are the hashes receipts and token pins carry.
//   - Error is the error every layer reports: a stable Code, a message, how to
//     fix it.
//
// Everything platform-specific (the SQL store, the HTTP API, the runners, the
// local host, the Cloudflare worker) lives in its own package and depends on
// this one, never the other way round. docs/ARCHITECTURE.md shows the layers.
//
// # The seed
//
// Comments across rowcall say "the seed" for the two specification documents
// rowcall follows: one describes the row contract, the dispatcher, flows, auth,
// receipts, tokens and every failure string; the other repeats it with tables
// and adds what Cloudflare D1 does (limits, billing by rows read, no interactive
// transactions, migrations, read replicas) and why the directory needs
// retrieval by meaning. Every failure string the seed prints is a contract and
// is kept literally; behaviour that goes further is marked "beyond the seed".
package rowcall

// Type is the directory's type column: it decides how target and content are read.
type Type string

// The four legal types; a fifth is refused by the table's CHECK constraint.
const (
	TypeFn    Type = "fn"    // target names a WebAssembly module; content is a JSON-array argument template
	TypeHTTP  Type = "http"  // target is "METHOD url"; content is the body template
	TypeAgent Type = "agent" // target is a model id; content is the system prompt
	TypeFlow  Type = "flow"  // target is empty; content is the step DSL
)

// Types lists the legal types in the order the seed prints them.
var Types = []Type{TypeFn, TypeHTTP, TypeAgent, TypeFlow}

// Valid reports whether t is one of the four legal types.
func (t Type) Valid() bool {
	for _, v := range Types {
		if t == v {
			return true
		}
	}
	return false
}
