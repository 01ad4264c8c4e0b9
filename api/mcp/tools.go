package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/contract"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/typed"
)

// The meta-tools' names. A row with one of these keys is not listed as its
// own tool (call_capability still reaches it).
const (
	SearchTool = "search_capabilities"
	CallTool   = "call_capability"
)

// The meta-tools' definitions are kept short: every client sends them to its
// model with each turn. What the descriptions leave out is in each search
// match's "call" line.
var searchTool = &sdk.Tool{
	Name:        SearchTool,
	Title:       "Search capabilities",
	Description: "Find capabilities by plain words, best first, each with its key and how to call it. More exist than are listed as tools.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"what you want done"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":25,"description":"matches (default 5)"}},` +
		`"required":["query"],"additionalProperties":false}`),
	Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
}

var callTool = &sdk.Tool{
	Name:        CallTool,
	Title:       "Call a capability",
	Description: "Call a capability by key, listed or not. Returns its result and public receipt.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"key":{"type":"string"},` +
		`"args":{"type":"string","description":"arguments joined by '|', e.g. \"37.77|-122.42\""},` +
		`"arguments":{"type":"object","description":"instead of args: named arguments, for a capability with an input schema"}},` +
		`"required":["key"],"additionalProperties":false}`),
}

func ptr[T any](v T) *T { return &v }

// projected is one row listed as a tool.
type projected struct {
	key  string
	tool *sdk.Tool
	fp   string // the tool's definition, as JSON: a change re-announces it
	call string // its call template ("" when it has none: complete.go)
}

// callable reports whether the caller could call row at all: the owner any
// row; a token a row in its scope that is not owner-only and not above its
// risk ceiling (the gate would refuse those, so they are not offered).
func callable(c Caller, row *rowcall.Row) bool {
	t := c.Token
	if t == nil {
		return c.Owner
	}
	return t.MayCall(row)
}

// project lists the rows the caller sees as tools: enabled, planner_visible,
// callable, at most MaxTools, in canonical order.
func (h *Handler) project(ctx context.Context, c Caller) ([]projected, error) {
	if h.cfg.MaxTools < 0 {
		return nil, nil
	}
	enabled := int64(1)
	f := rowcall.Filter{Enabled: &enabled, Scope: rowcall.ScopeOf(c.Token), Limit: min(rowcall.MaxPage, max(100, 2*h.cfg.MaxTools)), Bare: true}
	out := []projected{}
	for {
		page, err := h.cfg.Store.List(ctx, f)
		if err != nil {
			return nil, err
		}
		for i := range page.Rows {
			row := &page.Rows[i]
			if row.PlannerVisible == 0 || !callable(c, row) || row.Key == SearchTool || row.Key == CallTool {
				continue
			}
			out = append(out, rowTool(row))
			if len(out) == h.cfg.MaxTools {
				return out, nil
			}
		}
		if len(page.Rows) < f.Limit {
			return out, nil
		}
		f.Offset += len(page.Rows)
	}
}

// rowTool is a row's tool definition.
func rowTool(row *rowcall.Row) projected {
	t := &sdk.Tool{Name: row.Key, Description: describe(row)}
	annotate(row, t)
	if _, raw, ok := schemaOf(row); ok {
		t.InputSchema = raw
	} else {
		desc, _ := json.Marshal(argsHelp(row))
		t.InputSchema = json.RawMessage(`{"type":"object","properties":{"args":{"type":"string","description":` + string(desc) +
			`}},"additionalProperties":false}`)
	}
	if _, raw, ok := outputOf(row); ok {
		t.OutputSchema = raw
	}
	fp, _ := json.Marshal(t)
	return projected{key: row.Key, tool: t, fp: string(fp), call: callTemplate(row)}
}

// describe is the tool description: what the row says it does (its # WHAT
// line, else its first # line: Row.Description) and its # WHEN_TO_USE line.
func describe(row *rowcall.Row) string {
	d := sentence(row.Description())
	if d == "" {
		d = fmt.Sprintf("The %s capability %s.", row.Type, row.Key)
		if row.Category != "" {
			d = fmt.Sprintf("The %s capability %s (category %s).", row.Type, row.Key, row.Category)
		}
	}
	if when := row.DocLine("WHEN_TO_USE"); when != "" {
		d += " When to use: " + sentence(when)
	}
	return clip(d, 1024)
}

// argsHelp describes the one string argument of a row without a usable schema.
func argsHelp(row *rowcall.Row) string {
	d := "The arguments as one string, separated by '|'"
	if a := row.DocLine("ARGS"); a != "" {
		d += ": " + a
	}
	if ex := contract.Example(row); ex != "" {
		d += ". Example: " + ex
	}
	return clip(d, 512)
}

// schemaOf returns the row's input_schema as a tool input schema when it can
// be one: it compiles, it is an object schema (a missing "type" reads as
// "object"), and it declares top-level properties for named arguments. The
// JSON keeps the row's property order, which is the argument order.
func schemaOf(row *rowcall.Row) (*typed.Schema, json.RawMessage, bool) {
	s, ok := typed.Named(row.InputSchema)
	if !ok {
		return nil, nil, false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(row.InputSchema), &top) != nil {
		return nil, nil, false
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(row.InputSchema)) != nil {
		return nil, nil, false
	}
	raw := b.Bytes()
	if _, ok := top["type"]; !ok {
		raw = append([]byte(`{"type":"object",`), raw[1:]...)
	}
	return s, json.RawMessage(raw), true
}

// body turns a call's arguments into the row's pipe-separated body by the
// one rule every caller uses (typed.Body).
func body(row *rowcall.Row, arguments json.RawMessage) (string, error) {
	return typed.Body(row.InputSchema, arguments)
}

// callRow calls the row listed as the tool key with a call's arguments; a
// row that declares its output answers with it (output.go).
func (st *session) callRow(ctx context.Context, key string, args []byte) *sdk.CallToolResult {
	row := st.lookup(ctx, key)
	if row == nil { // gone, or out of scope: the dispatcher says unknown_key
		return st.dispatch(ctx, key, "")
	}
	var res *sdk.CallToolResult
	if b, err := body(row, args); err != nil {
		res = refusal(key, err)
	} else {
		res = st.dispatch(ctx, key, b)
	}
	if s, _, ok := outputOf(row); ok && !waits(res) {
		structure(res, s)
	}
	return res
}

// rowCaller is callRow for the tool key (the fast path's; the SDK's is
// session.handle).
func (st *session) rowCaller(key string) toolFunc {
	return func(ctx context.Context, args []byte) *sdk.CallToolResult { return st.callRow(ctx, key, args) }
}

// lookup returns the current row for key when the caller may see it (nil
// otherwise: the dispatcher then answers unknown_key with did_you_mean). It
// reads the dispatcher's row cache, so a call pays no query for it.
func (st *session) lookup(ctx context.Context, key string) *rowcall.Row {
	c, _ := st.current()
	row, ok := st.h.cfg.Dispatcher.Row(ctx, key, c.Token)
	if !ok {
		return nil
	}
	return &row
}

// callCapability is call_capability: key, and args or arguments.
func (st *session) callCapability(ctx context.Context, args []byte) *sdk.CallToolResult {
	var in struct {
		Key       string          `json:"key"`
		Args      json.RawMessage `json:"args"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(bytes.NewReader(orEmpty(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.Key == "" {
		return refusal(CallTool, errors.New(`call_capability takes {"key":"KEY","args":"a|b"} or {"key":"KEY","arguments":{…}}`))
	}
	hasArgs, hasNamed := present(in.Args), present(in.Arguments)
	var b string
	var err error
	switch {
	case hasArgs && hasNamed:
		err = errors.New("send args or arguments, not both")
	case hasNamed:
		row := st.lookup(ctx, in.Key)
		if row == nil {
			break // unknown to the caller: the dispatcher says so, with did_you_mean
		}
		if _, _, ok := schemaOf(row); !ok {
			err = fmt.Errorf("%s has no input_schema with named properties: pass its arguments as args, separated by '|'", in.Key)
			break
		}
		b, err = body(row, in.Arguments)
	case hasArgs:
		b, err = typed.ArgsText(in.Args)
	}
	if err != nil {
		return refusal(in.Key, err)
	}
	return st.dispatch(ctx, in.Key, b)
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

func orEmpty(raw []byte) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}")
	}
	return raw
}

// refusal is a call stopped before dispatch (its arguments could not be made
// into a body): nothing ran and nothing was recorded.
// failed is err as a tool's error: ERR:<reason>: <message>, then how to fix
// on a line of its own, with error, message and how_to_fix set in sc too (the
// fields of the API's error body). An error that is not a *rowcall.Error is
// logged as what with attrs, and reported without its text.
func failed(err error, sc map[string]any, what string, attrs ...any) (*rowcall.Error, string) {
	var e *rowcall.Error
	if !errors.As(err, &e) {
		slog.Error(what, append(attrs, "err", err)...)
		e = &rowcall.Error{Code: rowcall.EInternal, Message: "the server failed; the log has the cause"}
	}
	sc["error"] = e.Reason()
	text := "ERR:" + e.Reason()
	if e.Message != "" {
		sc["message"] = e.Message
		text += ": " + e.Message
	}
	if e.HowToFix != "" {
		sc["how_to_fix"] = e.HowToFix
		text += "\nhow to fix: " + e.HowToFix
	}
	return e, text
}

func refusal(key string, err error) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true,
		Content: []sdk.Content{&sdk.TextContent{Text: "ERR:invalid_arguments: " + err.Error()}},
		Meta: sdk.Meta{CallMeta: map[string]any{"ok": false, "ran": false, "key": key, "error": "invalid_arguments",
			"message": err.Error()}}}
}

// dispatch runs key with the session's caller, through the dispatcher's gate,
// and reports the result with its receipt.
func (st *session) dispatch(ctx context.Context, key, body string) *sdk.CallToolResult {
	c, receiptURL := st.current()
	a, _ := ctx.Value(askedKey{}).(*asked)
	named := st.retried(ctx, a)
	res, err := st.h.cfg.Dispatcher.Dispatch(ctx, dispatch.Request{Key: key, Body: body, Principal: c, Approval: named})
	if code := rowcall.ErrorCode(err); code == rowcall.EApprovalRequired || code == rowcall.EApprovalPending && named != "" {
		return st.awaiting(a, err, key, receiptURL)
	}
	if err != nil {
		sc := map[string]any{"ok": false, "ran": false, "key": key}
		e, text := failed(err, sc, "mcp: dispatch", "key", key)
		if dym, ok := e.Extra["did_you_mean"].([]string); ok {
			sc["did_you_mean"] = dym
			if len(dym) > 0 {
				text += "\ndid you mean: " + strings.Join(dym, ", ")
			}
		}
		content := []sdk.Content{&sdk.TextContent{Text: text}}
		if id, _ := e.Extra["invocation_id"].(string); id != "" { // a gate refusal is recorded
			sc["invocation_id"], sc["public_receipt"] = id, receiptURL(id)
			content = append(content, receiptText(id, receiptURL(id), "refused"))
		}
		return &sdk.CallToolResult{IsError: true, Content: content, Meta: sdk.Meta{CallMeta: sc}}
	}
	if err := res.Wait(); err != nil { // acknowledge nothing a crash could lose
		slog.Error("mcp: storing a receipt", "key", key, "invocation_id", res.Receipt.ID, "err", err)
		return &sdk.CallToolResult{IsError: true,
			Content: []sdk.Content{&sdk.TextContent{Text: "ERR:receipt: receipt " + res.Receipt.ID + " could not be stored; the log has the cause"}},
			Meta:    sdk.Meta{CallMeta: map[string]any{"ok": false, "ran": res.Ran, "key": key, "error": "receipt_not_stored", "invocation_id": res.Receipt.ID}}}
	}
	rc := res.Receipt
	sc := &called{OK: res.OK, Ran: res.Ran, Key: key, Trace: res.Trace,
		InvocationID: rc.ID, PublicReceipt: receiptURL(rc.ID), Contract: rc.Contract}
	out := &sdk.CallToolResult{IsError: !res.OK, Meta: sdk.Meta{CallMeta: sc}}
	var ok bool
	if res.MCPContent {
		out.Content, out.StructuredContent, ok = upstream(res.Result)
	}
	if !ok {
		out.Content = []sdk.Content{st.resultContent(ctx, key, res.Result)}
	}
	if rc.ID != "" {
		out.Content = append(out.Content, receiptText(rc.ID, receiptURL(rc.ID), rc.Outcome))
	}
	return out
}

// called is a call's fields in the result's _meta (CallMeta): the proof
// fields. Its fields are in
// the order encoding/json writes a map's keys (sorted), the order they had
// when this was a map; a struct is encoded without sorting or boxing.
type called struct {
	Contract      string `json:"contract_sha256"`
	InvocationID  string `json:"invocation_id"`
	Key           string `json:"key"`
	OK            bool   `json:"ok"`
	PublicReceipt string `json:"public_receipt"`
	Ran           bool   `json:"ran"`
	Trace         string `json:"trace"`
}

func receiptText(id, url, outcome string) *sdk.TextContent {
	t := "receipt " + id + " (" + outcome + ")"
	if url != "" {
		t += ": " + url
	}
	return &sdk.TextContent{Text: t + " — verify with GET /api/dispatch?confirm=" + id}
}

// search is search_capabilities: the ask index, narrowed to what the caller
// may call, each match with how to call it.
func (st *session) search(ctx context.Context, args []byte) *sdk.CallToolResult {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(orEmpty(args), &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return refusal(SearchTool, errors.New(`search_capabilities takes {"query":"plain words"}`))
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 5
	}
	limit = min(limit, 25)
	c, _ := st.current()
	hits, err := st.h.cfg.Store.Search(ctx, in.Query, rowcall.SearchFilter{Scope: rowcall.ScopeOf(c.Token), Limit: min(100, 2*limit+5), Near: true,
		For: &rowcall.Asker{Owner: c.Owner, Token: c.Token}})
	if err != nil { // a question past an ask's bounds (rowcall.CheckAsk) is refused as the API refuses it
		sc := map[string]any{"query": in.Query}
		_, text := failed(err, sc, "mcp: search")
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: sc}
	}
	matches := []map[string]any{}
	var text strings.Builder
	for i := range hits {
		row := &hits[i].Row
		if !callable(c, row) {
			continue
		}
		m, what, when := st.match(row)
		matches = append(matches, m)
		fmt.Fprintf(&text, "%d. %s — %s\n", len(matches), row.Key, what)
		if when != "" {
			fmt.Fprintf(&text, "   when to use: %s\n", when)
		}
		fmt.Fprintf(&text, "   call: %s\n", m["call"])
		if len(matches) == limit {
			break
		}
	}
	if len(matches) == 0 {
		text.WriteString("No capability matched \"" + in.Query + "\". Try other words: what you want done, or the kind of data.")
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.TrimRight(text.String(), "\n")}},
		StructuredContent: map[string]any{"query": in.Query, "matches": matches}}
}

// match is one search result: for structuredContent, the row's key and how
// to call it (a program's fields); for the text block, what it does and when
// to use it (prose for the model, said once: not repeated in the match).
func (st *session) match(row *rowcall.Row) (m map[string]any, what, when string) {
	what = sentence(row.Description())
	if what == "" {
		what = describe(row)
	}
	m = map[string]any{"key": row.Key, "listed_as_tool": st.listed(row.Key)}
	when = row.DocLine("WHEN_TO_USE")
	var call string
	if s, raw, ok := schemaOf(row); ok {
		m["input_schema"] = raw
		m["args_order"] = s.Names()
		call = CallTool + ` {"key":` + jsonText(row.Key) + `,"arguments":` + placeholders(s.Names()) + `}` + ` (or "args":"` + strings.Join(s.Names(), "|") + `" in that order)`
	} else {
		ex := contract.Example(row)
		call = CallTool + ` {"key":` + jsonText(row.Key) + `,"args":` + jsonText(ex) + `}`
		if args := row.DocLine("ARGS"); args != "" {
			m["args"] = args
			call += " — args: " + args
		}
		if ex != "" {
			m["example"] = ex
		}
	}
	if st.listed(row.Key) {
		call += "; or the tool " + row.Key
	}
	m["call"] = call
	return m, what, when
}

// placeholders is {"a":…,"b":…}: the shape of named arguments, in order.
func placeholders(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = jsonText(n) + ":…"
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// jsonText is s as a JSON string, without HTML escaping.
func jsonText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// sentence trims s and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
