package mcpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// schemas keeps each listed tool's inputSchema as the server sent it. The
// SDK decodes a tool's inputSchema into a map, which loses the order of its
// properties, and that order is the order of a row's pipe arguments
// (internal/typed): ListTools puts the bytes back.
type schemas struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

// record reads a tools/list result and keeps its tools' input schemas.
func (s *schemas) record(result []byte) {
	tools := gjson.GetBytes(result, "tools")
	if !tools.IsArray() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]json.RawMessage{}
	}
	for _, t := range tools.Array() {
		if name, in := t.Get("name"), t.Get("inputSchema"); name.Type == gjson.String && in.IsObject() {
			s.m[name.String()] = json.RawMessage(in.Raw)
		}
	}
}

// recordBody reads an HTTP answer to tools/list: one JSON-RPC response, or
// server-sent events (sse.go) whose data carries it.
func (s *schemas) recordBody(body []byte) {
	if r := gjson.GetBytes(body, "result"); r.Exists() {
		s.record([]byte(r.Raw))
		return
	}
	sr := newSSEReader(bytes.NewReader(body))
	defer sr.release()
	for {
		ev, err := sr.next()
		if err != nil {
			return
		}
		if r := gjson.GetBytes(ev.data, "result"); ev.dispatch && r.Exists() {
			s.record([]byte(r.Raw))
		}
	}
}

// restore gives each tool its inputSchema's bytes as sent.
func (s *schemas) restore(tools []*sdk.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tools {
		if raw, ok := s.m[t.Name]; ok {
			t.InputSchema = raw
		}
	}
}

// recording is a stdio transport whose responses schemas reads, and whose
// progress notifications are passed on to their calls as they are read
// (relay), so each comes before the answer it precedes: the SDK's session
// hands notifications to its handler on a goroutine of its own, which may
// run after the call has returned.
type recording struct {
	sdk.Transport
	s      *schemas
	server string // "stdio:NAME"
}

func (r recording) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return recordingConn{c, r.s, r.server}, nil
}

type recordingConn struct {
	sdk.Connection
	s      *schemas
	server string
}

func (c recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); ok && resp.Error == nil && bytes.Contains(resp.Result, []byte(`"tools"`)) {
		c.s.record(resp.Result)
	}
	if n, ok := m.(*jsonrpc.Request); ok && n.Method == progressNote {
		relayRaw(c.server, n.Params)
	}
	return m, err
}
