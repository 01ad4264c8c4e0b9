// Package rowcall holds the domain of a capability directory: the row that is a
// capability's whole contract, the invocation a runner executes, the receipt the
// engine writes, and the error every layer reports.
//
// Everything platform-specific (the SQL store, the HTTP API, the runners, the local
// host, the Cloudflare worker) lives in its own package and depends on this one,
// never the other way round.
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
