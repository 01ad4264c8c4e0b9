package mcpcall

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"context"
)

// eventStream writes msg as the last of a stream's events, with what the
// event stream format allows around it, each line ended by eol: a byte
// order mark, comments, a retry, a priming event (an id, empty data), an
// event with no data, an unknown field, an event of another type, and the
// message's data over several lines, one of them "data" without a colon.
func eventStream(msg string, eol string) string {
	head, rest, _ := strings.Cut(msg, ",")
	lines := []string{
		"\uFEFF: a comment", "retry: 1500", "id: prime-1", "data: ", "",
		":keepalive", "", "id: only-id", "foo: bar", "",
		"event: ping", "data: {\"not\":\"the answer\"}", "",
		"event: message", "id: 7", "data:" + head + ",", "data", "data: " + rest, "",
	}
	return strings.Join(lines, eol) + eol
}

// The event stream reader takes every form the format allows, over a
// real connection: LF, CRLF and CR line ends.
func TestSSEReaderTakesTheFormatsEdgeCases(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, eventStream(`{"a":1,"b":"two"}`, eol))
			io.WriteString(w, "id: unfinished"+eol+"data: dropped") // the stream ends mid-event
		}))
		resp, err := http.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		sr := newSSEReader(resp.Body)
		var got []string
		for {
			ev, err := sr.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("%q: %v", eol, err)
				}
				break
			}
			if ev.dispatch {
				got = append(got, ev.name+"|"+string(ev.data))
			}
		}
		want := []string{"|", `ping|{"not":"the answer"}`, "message|{\"a\":1,\n\n\"b\":\"two\"}"}
		if strings.Join(got, "\n---\n") != strings.Join(want, "\n---\n") || sr.lastID != "unfinished" || sr.retry != 1500*time.Millisecond {
			t.Errorf("%q: events %q, last id %q, retry %v", eol, got, sr.lastID, sr.retry)
		}
		sr.release()
		resp.Body.Close()
		s.Close()
	}
}

// sseServer is an MCP server of one tool, echo, whose every answer is an
// event stream written by eventStream with eol.
func sseServer(t *testing.T, eol string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		b, _ := io.ReadAll(r.Body)
		m := gjson.ParseBytes(b)
		id := m.Get("id").Raw
		var result string
		switch m.Get("method").Str {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sse","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}}}}]}`
		case "tools/call":
			text, _ := json.Marshal("echo " + m.Get("params.arguments.zeta").Str)
			result = `{"content":[{"type":"text","text":` + string(text) + `}]}`
		default:
			if id == "" { // a notification
				w.WriteHeader(http.StatusAccepted)
				return
			}
		}
		answer := `"result":` + result
		if result == "" {
			answer = `"error":{"code":-32601,"message":"method not found"}`
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "s1")
		io.WriteString(w, eventStream(`{"jsonrpc":"2.0","id":`+id+`,`+answer+`}`, eol))
	}))
	t.Cleanup(s.Close)
	return s
}

// A server whose event streams use what the format allows (a priming
// event, comments, multi-line data, CR or CRLF line ends) is listed
// through the SDK's client, its schema's property order kept, and called
// on the fast path and through the SDK.
func TestEventStreamsAsTheFormatAllows(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		s := sseServer(t, eol)
		server := s.URL + "/mcp"
		for _, sdkOnly := range []bool{false, true} {
			r := newRunner(allowing(t, s), Config{})
			r.sdkOnly = sdkOnly
			tools, _, err := r.ListTools(context.Background(), server, "", nil)
			if err != nil || len(tools) != 1 {
				t.Fatalf("%q: tools/list: %d tools, %v", eol, len(tools), err)
			}
			if b, _ := json.Marshal(tools[0].InputSchema); !strings.Contains(string(b), `{"zeta":{"type":"string"},"alpha"`) {
				t.Errorf("%q: the listed schema lost its order: %s", eol, b)
			}
			row := mcpRow(server, "echo")
			row.InputSchema = `{"type":"object","properties":{"zeta":{"type":"string"}}}`
			if out := run(r, context.Background(), row, "hi", nil); out.Result != "echo hi" {
				t.Errorf("%q (SDK only %v): %s", eol, sdkOnly, out.Result)
			}
			r.Close()
		}
	}
}
