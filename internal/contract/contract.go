// Package contract renders a row's contract document: everything a caller that
// knows nothing needs to call one capability correctly, as Markdown or JSON,
// fetched one at a time instead of holding every definition in context.
//
// The blocks are the seed's: path; capability and when to use; a run-now URL;
// the example call in tag form; type · runner · auth · risk; inputs and
// outputs; the affordances of the presented credential; the machine contract;
// invocation, ledger and repair links; troubleshooting. The seed's documents
// are about 4.4 KB because scaffolding dominates; these carry the same blocks
// in under 2,500 bytes for a typical row by saying each thing once.
//
// Brief renders the short form (format=brief, about 1 KB): the blocks a
// caller acts on before and after one call — capability and when to use, the
// run-now URL, the example call, type · runner · auth · risk, inputs and
// outputs, what the credential can do, the machine contract in one line, the
// contract hash, the receipt link — and a link to the full document for the
// rest (path, ledger, repair, troubleshooting).
//
// Build assembles a row's Doc from its contract fingerprint, the base URL the
// links start with and the Viewer (what the caller's credential may do); the
// Doc is the JSON form, and Markdown renders the text form.
//
// # contract_sha256
//
// The document's contract_sha256 (rowcall.ContractFingerprint, the hash a
// token pins and every receipt carries) covers what defines the call, as the
// seed's hash does: key, type, runner, category, target, payload (content
// without its '#' lines), input_schema, output_schema (when the row
// declares one), auth spec, risk, status,
// allowed_categories, includes, an fn row's module digest, and the row's
// description — its "# WHAT:" line (or, without one, its first '#' line),
// since a caller chooses a capability by it. Editing the examples, the
// planner hints or any other documentation line (# WHEN_TO_USE, # ARGS,
// # EX, # OUTPUT, …) leaves the fingerprint unchanged; editing the
// description or the category changes it.
package contract

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/rowcall/rowcall"
)

// Viewer is who asked: what their credential can do is part of the document.
type Viewer struct {
	Owner bool
	Token *rowcall.Token
}

// Doc is a contract document.
type Doc struct {
	Path         string            `json:"path"`
	Key          string            `json:"key"`
	Capability   string            `json:"capability"`
	WhenToUse    string            `json:"when_to_use"`
	RunNow       string            `json:"run_now"`
	Example      string            `json:"example_call"`
	Type         rowcall.Type      `json:"type"`
	Runner       string            `json:"runner"`
	Auth         string            `json:"auth"`
	Risk         string            `json:"risk"`
	Inputs       Inputs            `json:"inputs"`
	Output       string            `json:"output"`
	OutputSchema json.RawMessage   `json:"output_schema,omitempty"` // the row's output_schema, when it declares one
	Affordances  []string          `json:"affordances"`
	Machine      []string          `json:"machine_contract"`
	Contract     string            `json:"contract_sha256"`
	Links        map[string]string `json:"links"`
	Troubleshoot [][3]string       `json:"troubleshooting"` // problem, action, URL
}

// Inputs is the argument contract.
type Inputs struct {
	Args   string          `json:"args"`             // the # ARGS line
	Schema json.RawMessage `json:"schema,omitempty"` // input_schema, when the row has one
}

// Build assembles the document for row at base (the host's URL).
func Build(row *rowcall.Row, contract, base string, v Viewer) Doc {
	base = strings.TrimRight(base, "/")
	example := Example(row)
	document := base + "/api/dispatch?key=" + row.Key + "&format=markdown"
	category := row.Category
	if category == "" {
		category = "uncategorized"
	}
	d := Doc{
		Path:       "rowcall > " + strings.ToUpper(category) + " > " + row.Key,
		Key:        row.Key,
		Capability: orElse(row.Description(), "(no description)"),
		WhenToUse:  orElse(row.DocLine("WHEN_TO_USE"), "when the capability above is what you need"),
		RunNow:     base + "/api/dispatch?key=" + url.QueryEscape(row.Key) + "&run=1&body=" + url.QueryEscape(example),
		Example:    "[" + row.Key + "]" + example + "[/" + row.Key + "]",
		Type:       row.Type,
		Runner:     row.RunnerName(),
		Auth:       authSummary(row.Auth),
		Risk:       "low",
		Inputs:     Inputs{Args: orElse(row.DocLine("ARGS"), "one string; pieces separated by |")},
		Output:     orElse(row.DocLine("OUTPUT"), "a result string; failures start with ERR:"),
		Contract:   contract,
		Machine: []string{
			"Call by key with one pipe-separated string: POST /api/dispatch {\"key\",\"body\"}.",
			"Do not infer the row shape from memory: read this document; pin contract_sha256 if it must not change.",
			"A result starting with ERR: is a failure; do not retry a refusal unchanged.",
			"Keep proof.invocation_id: the receipt is the record of what ran.",
		},
		Links: map[string]string{
			"invoke":   "POST " + base + "/api/dispatch",
			"preview":  "POST " + base + "/api/dispatch {\"key\":\"" + row.Key + "\",\"body\":…,\"shape\":true}",
			"receipt":  base + "/api/dispatch?confirm=<invocation_id>",
			"ledger":   base + "/api/directory/" + row.Key + "/history",
			"repair":   "PATCH " + base + "/api/directory/" + row.Key,
			"document": document,
		},
		Troubleshoot: [][3]string{
			{"unknown_key", "use did_you_mean, or ask in plain words", base + "/api/dispatch?ask=<words>"},
			{"ERR:http:401 / 403", "the upstream refused the credential: rotate the secret named in auth; the row is fine", ""},
			{"ERR:breaker_open", "8 auth failures in a row: replace the credential, then clear the breaker", "DELETE " + base + "/api/breakers/" + row.Key},
			{"contract_changed / invalid_arguments", "re-read this document; mint a fresh pinned token or fix the arguments", document},
		},
	}
	if row.Sensitive != 0 {
		d.Risk = "high (sensitive: a token needs risk_ceiling high)"
	}
	if row.InputSchema != "" {
		d.Inputs.Schema = json.RawMessage(row.InputSchema)
	}
	if row.OutputSchema != "" {
		d.OutputSchema = json.RawMessage(row.OutputSchema)
	}
	d.Affordances = affordances(row, contract, v)
	return d
}

// enforced ends every affordance list (Brief leaves it out).
const enforced = "the server enforces scope whatever this list says"

func affordances(row *rowcall.Row, contract string, v Viewer) []string {
	switch {
	case v.Owner:
		return []string{"call", "preview (shape)", "read", "edit (PUT/PATCH)", "delete", "mint tokens for it", enforced}
	case v.Token != nil:
		t := v.Token
		var a []string
		switch {
		case row.OwnerOnly():
			a = append(a, "call: no (owner only)")
		case row.Sensitive != 0 && t.RiskCeiling != rowcall.RiskHigh:
			a = append(a, "call: no (risk ceiling low)")
		case t.Pins[row.Key] != "" && t.Pins[row.Key] != contract:
			a = append(a, "call: no (pinned contract changed)")
		default:
			a = append(a, "call", "preview (shape)")
		}
		return append(a, "read", enforced)
	}
	return []string{"read (public)", "call: no credential presented", enforced}
}

func authSummary(auth string) string {
	a, err := rowcall.ParseAuth(auth)
	switch {
	case auth == "":
		return "none"
	case err != nil:
		return "unusable: " + err.Error()
	case a.Env != "":
		return "required: " + a.Kind + " from $" + a.Env
	case a.Connection != "":
		return "required: the caller's own " + a.Connection + " connection (bearer)"
	}
	return "required: " + a.Kind
}

// Example is the row's first example body: its first examples entry, else
// its first # EX line without the [KEY]…[/KEY] tags around the body (the
// line as written when it has none). The contract, ask and MCP all use it.
func Example(row *rowcall.Row) string {
	var list []string
	if json.Unmarshal([]byte(row.Examples), &list) == nil && len(list) > 0 {
		return list[0]
	}
	return exampleBody(row, row.DocLine("EX"))
}

// Examples are every example body of the row, at most max: its examples
// entries, then each # EX line's body (as Example reads the first), in order.
// MCP's argument completion reads them.
func Examples(row *rowcall.Row, max int) []string {
	var list []string
	json.Unmarshal([]byte(row.Examples), &list)
	for line := range strings.SplitSeq(row.Content, "\n") {
		if len(list) >= max {
			break
		}
		if ex, ok := strings.CutPrefix(strings.TrimSpace(line), "# EX:"); ok {
			list = append(list, exampleBody(row, strings.TrimSpace(ex)))
		}
	}
	return list[:min(len(list), max)]
}

// exampleBody is an # EX line's body: what its [KEY]…[/KEY] tags hold, or
// the line as written when it has none.
func exampleBody(row *rowcall.Row, ex string) string {
	open, close := "["+row.Key+"]", "[/"+row.Key+"]"
	if i, j := strings.Index(ex, open), strings.LastIndex(ex, close); i >= 0 && j > i {
		return ex[i+len(open) : j]
	}
	return ex
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Markdown renders the document.
func (d Doc) Markdown() string {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	w("# %s\n%s\n\n", d.Key, d.Path)
	w("**Capability:** %s\n**When to use:** %s\n\n", d.Capability, d.WhenToUse)
	w("**RUN NOW:** %s\n**Example call:** `%s`\n\n", d.RunNow, d.Example)
	w("type · runner · auth · risk: %s · %s · %s · %s\n\n", d.Type, d.Runner, d.Auth, d.Risk)
	w("**Inputs:** %s\n", d.Inputs.Args)
	if len(d.Inputs.Schema) > 0 {
		w("**Schema:** `%s`\n", d.Inputs.Schema)
	}
	w("**Outputs:** %s\n%s\n", d.Output, d.outputSchema())
	w("**Your credential can:** %s\n\n", strings.Join(d.Affordances, "; "))
	w("## Machine contract\n")
	for i, m := range d.Machine {
		w("%d. %s\n", i+1, m)
	}
	w("contract_sha256: `%s`\n\n", d.Contract)
	w("## Invocation · ledger · repair\n")
	for _, k := range []string{"invoke", "preview", "receipt", "ledger", "repair"} {
		w("- %s: %s\n", k, d.Links[k])
	}
	w("\n## Troubleshooting\n")
	for _, t := range d.Troubleshoot {
		w("- %s → %s", t[0], t[1])
		if t[2] != "" {
			w(": %s", t[2])
		}
		w("\n")
	}
	return b.String()
}

// outputSchema is the document's output schema line ("" without one).
func (d Doc) outputSchema() string {
	if len(d.OutputSchema) == 0 {
		return ""
	}
	return "**Output schema:** `" + string(d.OutputSchema) + "`\n"
}

// brief is the machine contract in one line (Doc.Machine says it in full).
const brief = "POST /api/dispatch {\"key\",\"body\"}; Do not infer the row shape from memory: re-read this; " +
	"ERR: is a failure, do not retry a refusal unchanged; keep proof.invocation_id."

// Brief renders the short form of the document (see the package doc).
func (d Doc) Brief() string {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	w("# %s\n**Capability:** %s\n**When to use:** %s\n", d.Key, d.Capability, d.WhenToUse)
	w("**RUN NOW:** %s\n**Example call:** `%s`\n", d.RunNow, d.Example)
	w("type · runner · auth · risk: %s · %s · %s · %s\n", d.Type, d.Runner, d.Auth, d.Risk)
	w("**Inputs:** %s\n", d.Inputs.Args)
	if len(d.Inputs.Schema) > 0 {
		w("**Schema:** `%s`\n", d.Inputs.Schema)
	}
	w("**Outputs:** %s\n%s", d.Output, d.outputSchema())
	w("**Your credential can:** %s\n", strings.Join(slices.DeleteFunc(slices.Clone(d.Affordances), func(a string) bool { return a == enforced }), "; "))
	w("**Machine contract:** %s\ncontract_sha256: `%s`\n", brief, d.Contract)
	w("receipt: %s · full document: %s\n", d.Links["receipt"], d.Links["document"])
	return b.String()
}
