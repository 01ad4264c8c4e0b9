package mcpcall

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The answers the fast path reads itself come out as the SDK's decoder makes
// them, and the others are left to it.
func TestPlainAnswerDecodesAsTheSDK(t *testing.T) {
	results := []struct {
		json  string
		plain bool
	}{
		{`{"content":[{"type":"text","text":"{\"a\":1,\"b\":\"\\\\\/\b\f\n\r\t\u00e9\u2028\u0000\"}"}]}`, true},
		{`{"content":[{"type":"text","text":"\ud83c\udf21 a pair, \uD83C\uDF21"}]}`, true},
		{`{"content":[{"type":"text","text":"\ud83c lone \udf21"}]}`, false},
		{`{"content":[{"type":"text","text":"\ud83c\u0041"}]}`, false},
		{`{"content":[{"type":"text","text":"\udf21\ud83c"}]}`, false},
		{`{"content":[{"type":"text","text":"\ud83c"}]}`, false},
		{`{"content":[{"type":"text","text":"{a:1} é ✓ 🌡"}]}`, true},
		{`{"content":[{"text":"one","type":"text"},{"type":"text","text":""}],"isError":true}`, true},
		{`{"content":[],"isError":false}`, true},
		{`{}`, true},
		{`{"isError":true}`, true},
		{`{"content":[{"type":"text","text":"a"}],"structuredContent":{"a":1}}`, false},
		{`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`, false},
		{`{"content":[{"type":"text","text":"a","annotations":{"priority":1}}]}`, false},
		{`{"content":[{"type":"text","text":"a","text":"b"}]}`, false},
		{`{"content":[{"type":"text","text":"a"}],"content":[]}`, false},
		{`{"Content":[{"type":"text","text":"a"}]}`, false},
		{`{"content":[{"type":"text","text":"\ud800 lone"}]}`, false},
		{"{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff byte\"}]}", false},
		{`{"content":[{"type":"text","text":1}]}`, false},
		{`{"content":[{"type":"text"}]}`, false},
		{`{"content":{"type":"text","text":"a"}}`, false},
		{`{"content":[{"type":"text","text":"a"}],"isError":"yes"}`, false},
		{`{"content":[{"type":"text","text":"a"}],"_meta":{"k":"v"}}`, false},
	}
	const id = fastIDBase + 7
	for _, c := range results {
		if _, ok := plainResult([]byte(c.json)); ok != c.plain {
			t.Errorf("%s: read here %v, want %v", c.json, ok, c.plain)
		}
		var want sdk.CallToolResult
		wantErr := json.Unmarshal([]byte(c.json), &want)
		got, err := callResult([]byte(c.json))
		if (err != nil) != (wantErr != nil) || (err == nil && !reflect.DeepEqual(*got, want)) {
			t.Errorf("%s:\n got %#v %v\nwant %#v %v", c.json, got, err, &want, wantErr)
		}
		msg := `{"jsonrpc":"2.0","id":1099511627783,"result":` + c.json + `}`
		if _, ok := plainResponse([]byte(msg), id); !ok {
			t.Errorf("%s: not read here", msg)
		}
		sameMessage(t, msg, id)
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1099511627784,"result":{}}`, // another call's
		`{"jsonrpc":"2.0","id":1099511627783.0,"result":{}}`,
		`{"jsonrpc":"2.0","id":"1099511627783","result":{}}`,
		`{"jsonrpc":"1.0","id":1099511627783,"result":{}}`,
		`{"jsonrpc":"2.0","id":1099511627783,"error":{"code":-32602,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":1099511627783,"result":{},"error":null}`,
		`{"jsonrpc":"2.0","id":1099511627783,"result":{},"id":1099511627783}`,
		`{"jsonrpc":"2.0","id":1099511627783,"result":[]}`,
		`{"jsonrpc":"2.0","method":"ping","id":1}`,
		`[{"jsonrpc":"2.0","id":1099511627783,"result":{}}]`,
		`{"jsonrpc":"2.0","id":1099511627783,"result":{}`,
	} {
		if _, ok := plainResponse([]byte(msg), id); ok {
			t.Errorf("%s: read here", msg)
		}
		sameMessage(t, msg, id)
	}
}

// sameMessage fails t when response reads msg otherwise than the SDK's decoder.
func sameMessage(t *testing.T, msg string, id int64) {
	t.Helper()
	want, wantErr := jsonrpc.DecodeMessage([]byte(msg))
	got, err := response([]byte(msg), id)
	if (err != nil) != (wantErr != nil) || (err == nil && !reflect.DeepEqual(got, want)) {
		t.Errorf("%s:\n got %#v %v\nwant %#v %v", msg, got, err, want, wantErr)
	}
}

// BenchmarkAnswerDecode is the reading of one tools/call answer (the
// direct server's in BenchmarkMCPRowCall: a text block of JSON) by the
// SDK's decoder, as the fast path read it before, and by response and
// callResult:
//
//	go test ./runners/mcpcall -run xxx -bench AnswerDecode -benchmem -count 5
func BenchmarkAnswerDecode(b *testing.B) {
	const id = fastIDBase + 7
	msg := []byte(`{"jsonrpc":"2.0","id":1099511627783,"result":{"content":[{"type":"text","text":"{\"temperature_2m\":15.7,\"q\":\"latitude=1\u0026longitude=2\"}"}]}}`)
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			m, err := jsonrpc.DecodeMessage(msg)
			var res sdk.CallToolResult
			if err != nil || json.Unmarshal(m.(*jsonrpc.Response).Result, &res) != nil || len(res.Content) != 1 {
				b.Fatal(m, err)
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			m, err := response(msg, id)
			if err != nil {
				b.Fatal(err)
			}
			if res, err := callResult(m.(*jsonrpc.Response).Result); err != nil || len(res.Content) != 1 {
				b.Fatal(res, err)
			}
		}
	})
}
