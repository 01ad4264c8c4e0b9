package mcp

import (
	"bytes"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
	"github.com/rowcall/rowcall/internal/typed"
)

// A row that declares its output (output_schema, a JSON Schema object of
// type "object") is listed with it as the tool's outputSchema, and a call of
// its tool answers, as the specification asks of a tool with one:
//
//   - the result parsed as JSON as structuredContent (an http row's: the
//     body of its "HTTP <status>:<body>", args.HTTPBody), that JSON text as
//     the first text block (the serialized JSON a client without structured
//     content reads), the receipt as the second;
//   - a result that is not JSON, or does not conform to the schema, as an
//     error result (isError, ERR:invalid_output: where and what failed, and
//     the result's start), without structuredContent: the row ran, and its
//     receipt says so, but the answer is not what the row declares;
//   - the call's own fields (ok, ran, key, trace, invocation_id,
//     public_receipt, contract_sha256; error, message and how_to_fix on an
//     error) in the result's _meta under CallMeta, as on every call of a
//     row (a client validates any structuredContent it is given against
//     the tool's outputSchema).
//
// The tool handler does this, so the fast path and the SDK answer the same.
//
// A row without an output schema answers its result as text, except an MCP
// row whose tool answered other content or structured content
// (dispatch.Result.MCPContent): its answer is the tool's blocks as they
// came (image, audio, resource_link, resource, text) and its
// structuredContent, none when the tool sent none (upstream). Either way the
// receipt's text block follows, and the call's fields are in _meta, never
// in structuredContent, which is only ever the tool's.

// CallMeta is the _meta key of a row's call fields: its receipt's id and
// public link, its trace, whether it ran, its error.
const CallMeta = "rowcall/call"

// EInvalidOutput is a result that does not conform to its row's output_schema.
const EInvalidOutput rowcall.Code = "invalid_output"

// outputOf returns the row's output_schema, compiled and as the tool's
// outputSchema, when it has one a tool can declare (type "object").
func outputOf(row *rowcall.Row) (*typed.Schema, json.RawMessage, bool) {
	if row.OutputSchema == "" || gjson.Get(row.OutputSchema, "type").String() != "object" {
		return nil, nil, false
	}
	s, err := typed.CompileOutput(row.OutputSchema)
	if err != nil {
		return nil, nil, false
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(row.OutputSchema)) != nil {
		return nil, nil, false
	}
	return s, b.Bytes(), true
}

// structure makes res, a call of a row that declares s as its output, the
// answer the package doc describes.
func structure(res *sdk.CallToolResult, s *typed.Schema) {
	if res.Meta == nil {
		res.Meta = sdk.Meta{}
	}
	res.StructuredContent = nil
	if res.IsError || len(res.Content) == 0 {
		return
	}
	t, ok := res.Content[0].(*sdk.TextContent)
	if !ok { // media: not what an object schema describes
		invalidOutput(res, "the result is not text (an image or audio), so it is not the JSON object output_schema declares", "")
		return
	}
	raw := json.RawMessage(args.HTTPBody(t.Text))
	if !json.Valid(raw) {
		invalidOutput(res, "the result is not JSON, so it does not conform to output_schema", t.Text)
		return
	}
	if err := s.Validate(raw); err != nil {
		invalidOutput(res, "the result does not conform to output_schema: "+err.Error(), t.Text)
		return
	}
	res.StructuredContent, res.Content[0] = raw, &sdk.TextContent{Text: string(raw)}
}

// invalidOutput turns res into the error result of a row whose result is
// not what it declares.
func invalidOutput(res *sdk.CallToolResult, msg, result string) {
	if sc, ok := res.Meta[CallMeta].(*called); ok {
		e := &rowcall.Error{Code: EInvalidOutput, Message: msg,
			HowToFix: "the row ran (its receipt records the result); fix " + sc.Key + "'s output_schema, or what it calls, so the two agree (GET /api/directory/" + sc.Key + " shows both)"}
		m := map[string]any{"ok": false, "ran": sc.Ran, "key": sc.Key, "trace": sc.Trace, "invocation_id": sc.InvocationID,
			"public_receipt": sc.PublicReceipt, "contract_sha256": sc.Contract}
		_, text := failed(e, m, "")
		if result != "" {
			text += "\nresult: " + clip(result, 1024)
		}
		res.Meta[CallMeta] = m
		res.Content[0] = &sdk.TextContent{Text: text}
	}
	res.IsError = true
}

// upstream is an MCP row's answer, MCP's JSON of the tool's content and
// structuredContent (runners/mcpcall), as those blocks and that structured
// content (its JSON as it came, numbers unrounded); false when result does
// not read as one (a credential redacted from it: its text is answered).
func upstream(result string) ([]sdk.Content, any, bool) {
	var r sdk.CallToolResult
	if json.Unmarshal([]byte(result), &r) != nil {
		return nil, nil, false
	}
	var sc any
	if raw := gjson.Get(result, "structuredContent"); raw.Exists() {
		sc = json.RawMessage(raw.Raw)
	}
	return r.Content, sc, true
}
