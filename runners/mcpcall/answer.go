package mcpcall

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/rowcall/rowcall/internal/jsontext"
)

// Reading the fast path's answer. The SDK decodes every message, and then
// a tools/call result again, with a decoder that allocates a 32 KB buffer
// each time (its internal json package over segmentio/encoding), which was
// most of the bytes, and much of the GC work, an MCP row's call allocates
// (BenchmarkMCPRowCall). The plain answers — the response to the call with
// its result and nothing else, a result of text blocks and isError — are
// read here from the bytes instead, into what the SDK would have made of
// them; anything else (an error, other keys, other content, a string the
// SDK's decoder might read otherwise) goes to the SDK's decoder as before
// (TestPlainAnswerDecodesAsTheSDK compares the two).

// response is the JSON-RPC message in data: read here when it is the plain
// response to the call id, else by the SDK's decoder.
func response(data []byte, id int64) (jsonrpc.Message, error) {
	if result, ok := plainResponse(data, id); ok {
		rid, _ := jsonrpc.MakeID(float64(id))
		return &jsonrpc.Response{ID: rid, Result: result}, nil
	}
	return jsonrpc.DecodeMessage(data)
}

// plainResponse returns the result of data when data is exactly one
// object with the keys jsonrpc "2.0", id (the integer id) and result (an
// object), each once: the response the SDK would decode to that result.
func plainResponse(data []byte, id int64) (json.RawMessage, bool) {
	if !gjson.ValidBytes(data) {
		return nil, false
	}
	msg := gjson.ParseBytes(data)
	if !msg.IsObject() {
		return nil, false
	}
	var result json.RawMessage
	var seen [3]bool
	ok := true
	msg.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Raw == `"jsonrpc"` && !seen[0]:
			seen[0], ok = true, v.Raw == `"2.0"`
		case k.Raw == `"id"` && !seen[1]:
			seen[1], ok = true, v.Raw == strconv.FormatInt(id, 10)
		case k.Raw == `"result"` && !seen[2]:
			seen[2], ok = true, v.IsObject()
			result = json.RawMessage(v.Raw)
		default:
			ok = false
		}
		return ok
	})
	return result, ok && seen[0] && seen[1] && seen[2]
}

// callResult decodes a tools/call result as the SDK does
// (CallToolResult.UnmarshalJSON), reading a plain one itself.
func callResult(result []byte) (*sdk.CallToolResult, error) {
	if res, ok := plainResult(result); ok {
		return res, nil
	}
	var res sdk.CallToolResult
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// plainResult reads result when it is an object of the keys content (an
// array of {"type":"text","text":…} objects) and isError (a boolean), each
// once, and every text a string unquote reads.
func plainResult(result []byte) (*sdk.CallToolResult, bool) {
	msg := gjson.ParseBytes(result) // valid: a part of a message plainResponse validated
	if !msg.IsObject() {
		return nil, false
	}
	res := &sdk.CallToolResult{}
	var content, isError bool
	ok := true
	msg.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Raw == `"content"` && !content && v.IsArray():
			content = true
			res.Content = make([]sdk.Content, 0, 1)
			v.ForEach(func(_, c gjson.Result) bool {
				var t *sdk.TextContent
				if t, ok = plainText(c); ok {
					res.Content = append(res.Content, t)
				}
				return ok
			})
		case k.Raw == `"isError"` && !isError && (v.Type == gjson.True || v.Type == gjson.False):
			isError, res.IsError = true, v.Type == gjson.True
		default:
			ok = false
		}
		return ok
	})
	if !content {
		res.Content = []sdk.Content{} // as the SDK's contentsFromWire makes an absent list
	}
	return res, ok
}

// plainText reads one content block {"type":"text","text":"…"} (the keys
// once each, in either order).
func plainText(c gjson.Result) (*sdk.TextContent, bool) {
	if !c.IsObject() {
		return nil, false
	}
	var text *string
	typed, ok := false, true
	c.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Raw == `"type"` && !typed:
			typed, ok = true, v.Raw == `"text"`
		case k.Raw == `"text"` && text == nil && v.Type == gjson.String:
			var s string
			s, ok = unquote(v.Raw)
			text = &s
		default:
			ok = false
		}
		return ok
	})
	if !ok || !typed || text == nil {
		return nil, false
	}
	return &sdk.TextContent{Text: *text}, true
}

// unquote is the JSON string raw (quoted, valid JSON) as the SDK's decoder
// reads it, and false when that is not certain: raw bytes that are not
// UTF-8, or what jsontext.Unescape leaves to a decoder (a lone surrogate:
// decoders differ on those).
func unquote(raw string) (string, bool) {
	raw = raw[1 : len(raw)-1]
	if !utf8.ValidString(raw) {
		return "", false
	}
	if strings.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	return jsontext.Unescape(raw)
}
