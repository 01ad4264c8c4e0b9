package mcp

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
	"github.com/rowcall/rowcall/internal/contract"
	"github.com/rowcall/rowcall/internal/typed"
)

// A row's call as a resource template, so a client completes its argument
// values (MCP completes only prompt and resource-template arguments):
//
//   - rowcall://call/KEY{?a,b} — one variable per input_schema property, in
//     declared order — or rowcall://call/KEY{?args} for a row without named
//     arguments. resources/templates/list names the contract template and
//     the call template of every row listed as a tool, in their order.
//   - completion/complete with ref {"type":"ref/resource","uri":<a row's
//     call template, as listed>} and an argument of it answers the values
//     that start with what was typed (case folded): the property's enum (and
//     const) in input_schema, then the values the row's examples give it
//     (its examples column, then its # EX lines, each body split as a call's
//     is), each once, at most maxCompletions, with total and hasMore.
//     Only a row the caller may call (in scope, enabled, not above its risk
//     ceiling) completes: any other, or any other argument, answers none.
//   - resources/read of an expanded call template
//     (rowcall://call/WEATHER?city=Paris&units=metric) is the call prepared
//     and checked, not run: the row's key, the named arguments as a call
//     sends them, the pipe-separated body, and whether input_schema takes
//     them (the gate's check) with its first failure. Nothing runs and
//     nothing is recorded.
//
// A row whose property names are not URI template variable names (letters,
// digits, '_', dot-separated) has no call template.

// callPrefix is what a call template (and a call resource's URI) starts with.
const callPrefix = "rowcall://call/"

// maxExamples is how many example bodies completion reads of a row.
const maxExamples = 64

// varName is an RFC 6570 variable name without percent-encoding.
var varName = regexp.MustCompile(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$`)

// callNames returns the row's argument names (input_schema's properties in
// order, or args) and its schema when it takes named arguments.
func callNames(row *rowcall.Row) ([]string, *typed.Schema) {
	if s, _, ok := schemaOf(row); ok {
		return s.Names(), s
	}
	return []string{"args"}, nil
}

// callTemplate is the row's call template, "" when it cannot have one.
func callTemplate(row *rowcall.Row) string {
	names, _ := callNames(row)
	for _, n := range names {
		if !varName.MatchString(n) {
			return ""
		}
	}
	return callPrefix + row.Key + "{?" + strings.Join(names, ",") + "}"
}

// callResource is the template of a row listed as a tool.
func callResource(key, template string) *sdk.ResourceTemplate {
	return &sdk.ResourceTemplate{Name: key + " call", Title: "Call " + key, URITemplate: template, MIMEType: "application/json",
		Description: "The call of " + key + " with these arguments, prepared and checked against its input_schema, not run; completion/complete suggests each argument's values."}
}

// listTemplates is one page of resources/templates/list: the contract
// template, then the call template of each row listed as a tool.
func (st *session) listTemplates(cursor string, size int) (*sdk.ListResourceTemplatesResult, error) {
	offset, err := offsetOf(cursor)
	if err != nil {
		return nil, err
	}
	all := []*sdk.ResourceTemplate{contractTemplate}
	st.mu.Lock()
	if st.proj != nil {
		for _, t := range st.proj.tools {
			if t.call != "" {
				all = append(all, callResource(t.key, t.call))
			}
		}
	}
	st.mu.Unlock()
	res := &sdk.ListResourceTemplatesResult{ResourceTemplates: all[min(offset, len(all)):]}
	res.TTLMs, res.CacheScope = int(ListTTL.Milliseconds()), "private"
	if len(res.ResourceTemplates) > size {
		res.ResourceTemplates = res.ResourceTemplates[:size]
		res.NextCursor = strconv.Itoa(offset + size)
	}
	return res, nil
}

// offsetOf reads a list cursor (an offset; "" is 0).
func offsetOf(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(cursor)
	if err != nil || n < 0 {
		return 0, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor " + strconv.Quote(cursor) + ": pass the nextCursor of the previous answer"}
	}
	return n, nil
}

// callRowFor returns the row a call template or call URI names, when the
// caller may call it (nil otherwise), and the rest of the URI after the key.
func (st *session) callRowFor(ctx context.Context, uri string) (*rowcall.Row, string) {
	rest, ok := strings.CutPrefix(uri, callPrefix)
	if !ok {
		return nil, ""
	}
	i := strings.IndexAny(rest, "{?")
	if i < 0 {
		i = len(rest)
	}
	row := st.lookup(ctx, rest[:i])
	c, _ := st.current()
	if row == nil || row.Enabled == 0 || !callable(c, row) {
		return nil, ""
	}
	return row, rest[i:]
}

// completeCall is completion/complete of a call template's argument.
func (st *session) completeCall(ctx context.Context, p *sdk.CompleteParams, res *sdk.CompleteResult) {
	row, _ := st.callRowFor(ctx, p.Ref.URI)
	if row == nil || callTemplate(row) != p.Ref.URI {
		return
	}
	names, s := callNames(row)
	at := slices.Index(names, p.Argument.Name)
	if at < 0 {
		return
	}
	var values []string
	if s != nil { // the property's enum and const, as declared
		prop := gjson.Get(row.InputSchema, "properties."+gjson.Escape(p.Argument.Name))
		for _, v := range append(prop.Get("enum").Array(), prop.Get("const")) {
			if v.Exists() {
				values = append(values, valueText(v))
			}
		}
	}
	for _, ex := range contract.Examples(row, maxExamples) {
		if s == nil {
			values = append(values, ex)
		} else if v := gjson.GetBytes(s.Arguments(args.Split(ex)), gjson.Escape(p.Argument.Name)); v.Exists() {
			values = append(values, valueText(v))
		}
	}
	typedSoFar := strings.ToLower(p.Argument.Value)
	seen := map[string]bool{}
	for _, v := range values {
		if v == "" || seen[v] || !strings.HasPrefix(strings.ToLower(v), typedSoFar) {
			continue
		}
		seen[v] = true
		res.Completion.Total++
		if len(res.Completion.Values) < maxCompletions {
			res.Completion.Values = append(res.Completion.Values, v)
		}
	}
	res.Completion.HasMore = res.Completion.Total > len(res.Completion.Values)
}

// valueText is a JSON value as an argument's text: a string as it is,
// anything else as its JSON.
func valueText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return v.Raw
}

// prepared is what reading a call resource answers.
type prepared struct {
	Key       string          `json:"key"`
	Arguments json.RawMessage `json:"arguments"`
	Args      string          `json:"args"`
	Valid     bool            `json:"valid"`
	Error     string          `json:"error,omitempty"`
}

// readCall is resources/read of an expanded call template: the call
// prepared and checked, not run.
func (st *session) readCall(ctx context.Context, uri string) (*sdk.ReadResourceResult, error) {
	row, rest := st.callRowFor(ctx, uri)
	if row == nil || strings.HasPrefix(rest, "{") {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	q, err := url.ParseQuery(strings.TrimPrefix(rest, "?"))
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the call's arguments are not a query string: " + err.Error()}
	}
	names, s := callNames(row)
	for name := range q {
		if !slices.Contains(names, name) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown argument " + strconv.Quote(name) + ": " + row.Key + " takes " + strings.Join(names, ", ")}
		}
	}
	argv := make([]string, len(names))
	for i, n := range names {
		argv[i] = q.Get(n)
	}
	for len(argv) > 0 && argv[len(argv)-1] == "" { // a missing trailing argument is left out, as a call leaves it
		argv = argv[:len(argv)-1]
	}
	p := prepared{Key: row.Key, Args: strings.Join(argv, "|"), Valid: true}
	argv = args.Split(p.Args) // what a call with this body is checked as
	if s == nil {
		p.Arguments, _ = json.Marshal(map[string]string{"args": p.Args})
	} else {
		p.Arguments = s.Arguments(argv)
	}
	if row.InputSchema != "" {
		if err := checkArgs(row, argv); err != nil {
			p.Valid, p.Error = false, err.Error()
		}
	}
	text, _ := json.Marshal(p)
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(text)}}}, nil
}

// checkArgs is the gate's check of a call's arguments against input_schema.
func checkArgs(row *rowcall.Row, argv []string) error {
	s, err := typed.Compile(row.InputSchema)
	if err != nil {
		return err
	}
	return s.Check(argv)
}
