package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/rowcall/rowcall"
)

// The fast path: a tools/call on a session the SDK has initialized is
// answered here, without the SDK's JSON-RPC connection and streamable
// transport (which cost more CPU than the call's dispatch), with the bytes
// the SDK would write: the same tool handlers build the result, the SDK's
// CallToolResult.MarshalJSON encodes it, and the JSON-RPC envelope and the
// plain JSON answer are the SDK's with its JSONResponse option, which the
// handler sets (TestFastPathAnswersAsTheSDK sends every case both ways and
// compares). Only the plain form is taken: one JSON object with
// exactly the keys jsonrpc "2.0", a numeric or plain string id, method
// "tools/call" and params with name, optional arguments and an optional
// _meta the answer does not depend on (plainMeta), a
// tool the session lists, a protocol version the SDK accepts on a stateful
// server, the SDK's content type and Accept rules. Everything else —
// initialize, notifications, GET and DELETE, batches, other methods, an
// unknown tool, an unknown or closed session, bad headers — goes to the SDK
// untouched, so its answers (and its errors) stay its own. Stateless (the
// worker), the fast path takes call_capability alone: the SDK would first
// build the caller's projection (a directory query) for a server that
// answers one message. There it takes the newest protocol's calls too
// (perRequest: the version, client info and capabilities in each request's
// _meta, as the Go SDK client sends them to a stateless server), answered
// as the SDK answers them: the result with the server's info in its _meta
// and resultType "complete".
//
// What the SDK did around a call and the fast path does itself: the idle
// timeout (the session's own, Config.Idle, counted over every POST, as the
// SDK counted); notifications/cancelled for a call in flight here cancels
// it (the SDK cancelled its handler's context); a call runs to its end when
// the client goes away (the SDK detached a handler from the HTTP request).
// A request id already in flight is refused as the SDK refuses it, among
// the fast calls (an id in flight in the SDK is the SDK's to refuse).

// fastCall is a tools/call the fast path answers.
type fastCall struct {
	id   string // the request id, as JSON (a number or a plain string)
	name string
	args []byte       // params.arguments as sent (nil when absent)
	meta gjson.Result // params._meta (its Type gjson.Null when absent)
}

// parseCall returns the call in body when body is a lone tools/call request
// in the plain form the fast path answers exactly as the SDK would.
func parseCall(body []byte) (fastCall, bool) {
	var c fastCall
	if !gjson.ValidBytes(body) {
		return c, false
	}
	msg := gjson.ParseBytes(body)
	if !msg.IsObject() {
		return c, false
	}
	var seen [4]bool
	var params gjson.Result
	ok := true
	msg.ForEach(func(k, v gjson.Result) bool {
		i := slices.Index([]string{"jsonrpc", "id", "method", "params"}, k.Str)
		if i < 0 || seen[i] {
			ok = false
			return false
		}
		seen[i] = true
		switch i {
		case 0:
			ok = v.Type == gjson.String && v.Str == "2.0"
		case 1:
			c.id, ok = v.Raw, plainID(v)
		case 2:
			ok = v.Type == gjson.String && v.Str == "tools/call"
		case 3:
			params, ok = v, v.IsObject()
		}
		return ok
	})
	if !ok || !seen[0] || !seen[1] || !seen[2] || !seen[3] {
		return c, false
	}
	var named, meta bool
	params.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "name" && !named && v.Type == gjson.String:
			c.name, named = v.Str, true
		case k.Str == "arguments" && c.args == nil:
			c.args = []byte(v.Raw)
		case k.Str == "_meta" && !meta:
			meta, ok, c.meta = true, v.IsObject(), v
		default: // a repeated key, anything else
			ok = false
		}
		return ok
	})
	return c, ok && named && shallow(body, maxDepth)
}

// plainMeta reports whether a request's _meta is one the SDK's answer does
// not depend on: an object with no key of the protocol's own
// (io.modelcontextprotocol/…: the newer protocol's version, client info and
// capabilities, a related task) and a progressToken, if any, that is a
// string or a number. On a session, a call with a progressToken is answered
// as an event stream that carries its progress before its result
// (progressStream); stateless, the answer is the call's result alone.
func plainMeta(meta gjson.Result) bool {
	if !meta.IsObject() {
		return false
	}
	ok := true
	meta.ForEach(func(k, v gjson.Result) bool {
		ok = !strings.HasPrefix(k.Str, "io.modelcontextprotocol/") &&
			(k.Str != "progressToken" || v.Type == gjson.String || v.Type == gjson.Number)
		return ok
	})
	return ok
}

// maxDepth is the deepest nesting of objects and arrays the SDK decodes (its
// internal json package's defaultMaxDepth); a deeper message is its to refuse.
const maxDepth = 1000

// shallow reports whether body, valid JSON, nests objects and arrays at most
// max deep, counted as the SDK counts (brackets outside strings).
func shallow(body []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > max {
				return false
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return true
}

// plainID reports whether id is one the SDK writes back as it came: an
// integer a float64 holds exactly (the SDK decodes ids as float64), or a
// string of characters JSON writes as themselves.
func plainID(id gjson.Result) bool {
	raw := id.Raw
	switch id.Type {
	case gjson.Number:
		digits := strings.TrimPrefix(raw, "-")
		if digits == "" || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
			return false
		}
		for _, b := range []byte(digits) {
			if b < '0' || b > '9' {
				return false
			}
		}
		return raw != "-0"
	case gjson.String:
		if len(raw) < 3 || raw[0] != '"' || raw[len(raw)-1] != '"' {
			return false
		}
		for _, b := range []byte(raw[1 : len(raw)-1]) {
			if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("-_.:", b) >= 0) {
				return false
			}
		}
		return true
	}
	return false
}

// cancelOf returns the request id (as JSON) a lone notifications/cancelled
// in body names.
func cancelOf(body []byte) (string, bool) {
	if !bytes.Contains(body, []byte("notifications/cancelled")) || !gjson.ValidBytes(body) {
		return "", false
	}
	msg := gjson.ParseBytes(body)
	if !msg.IsObject() || msg.Get("method").Str != "notifications/cancelled" || msg.Get("id").Exists() || msg.Get("jsonrpc").Str != "2.0" {
		return "", false
	}
	id := msg.Get("params.requestId")
	return id.Raw, plainID(id)
}

// statefulVersions are the MCP-Protocol-Version values the SDK accepts on
// a stateful server (the newest protocol is for stateless servers only).
var statefulVersions = slices.DeleteFunc(sdk.SupportedProtocolVersions(), func(v string) bool { return v >= "2026-07-28" })

// newestProtocol is where the per-request protocol begins (SEP-2575): a
// request carries its version, client info and capabilities in _meta, and
// the SDK accepts it on a stateless server only.
const newestProtocol = "2026-07-28"

// perRequest reports whether a call on the newest protocol is one the SDK
// answers as the call's result: its standard headers name the method and
// the tool as the body does (Mcp-Method, Mcp-Name; rowcall's tools declare
// no parameter headers), and its _meta carries the header's protocol
// version, client capabilities the SDK decodes and client info it decodes
// if any — and no other key of the protocol's own (a log level, a task).
func perRequest(r *http.Request, c fastCall) bool {
	version := r.Header.Get("MCP-Protocol-Version")
	if r.Header.Get("Mcp-Method") != "tools/call" || r.Header.Get("Mcp-Name") != c.name {
		return false
	}
	ok, seen := true, map[string]bool{}
	c.meta.ForEach(func(k, v gjson.Result) bool {
		if seen[k.Str] {
			ok = false
			return false
		}
		seen[k.Str] = true
		switch k.Str {
		case sdk.MetaKeyProtocolVersion:
			ok = v.Type == gjson.String && v.Str == version
		case sdk.MetaKeyClientCapabilities:
			var caps struct { // the SDK's clientCapabilitiesV2, as JSON (roots and sampling are its deprecated types' shapes)
				Experimental map[string]any `json:"experimental"`
				Extensions   map[string]any `json:"extensions"`
				Roots        *struct {
					ListChanged bool `json:"listChanged"`
				} `json:"roots"`
				Sampling *struct {
					Context *struct{} `json:"context"`
					Tools   *struct{} `json:"tools"`
				} `json:"sampling"`
				Elicitation *sdk.ElicitationCapabilities `json:"elicitation"`
			}
			ok = decodesAs(v, &caps)
		case sdk.MetaKeyClientInfo:
			var info sdk.Implementation
			ok = decodesAs(v, &info)
		default:
			ok = !strings.HasPrefix(k.Str, "io.modelcontextprotocol/")
		}
		return ok
	})
	return ok && seen[sdk.MetaKeyProtocolVersion] && seen[sdk.MetaKeyClientCapabilities]
}

// decodesAs reports whether the object v decodes into x strictly: no field x
// lacks (encoding/json matches names without case, the SDK's decoder with
// it: so each of v's keys must come back when x is encoded again), no value
// of another type. What it refuses the SDK may accept; it accepts nothing
// the SDK refuses.
func decodesAs(v gjson.Result, x any) bool {
	if !v.IsObject() {
		return false
	}
	dec := json.NewDecoder(strings.NewReader(v.Raw))
	dec.DisallowUnknownFields()
	if dec.Decode(x) != nil {
		return false
	}
	again, err := json.Marshal(x)
	if err != nil {
		return false
	}
	back := gjson.ParseBytes(again)
	ok := true
	v.ForEach(func(k, _ gjson.Result) bool {
		ok = back.Get(gjson.Escape(k.Str)).Exists()
		return ok
	})
	return ok
}

// plainPOST reports whether r's headers are ones the SDK lets through to a
// session's messages (to a stateless server's, when stateless) as they are.
func plainPOST(r *http.Request, stateless bool) bool {
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		return false
	}
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(statefulVersions, v) &&
		!(stateless && slices.Contains(sdk.SupportedProtocolVersions(), v)) {
		return false
	}
	var jsonOK, streamOK bool // the SDK's Accept rule (streamableAccepts)
	for _, value := range r.Header.Values("Accept") {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// serveFast answers r (a POST on st's session id; when stateless, any POST,
// st a session built for it alone, without a server) when the fast path
// takes it; otherwise it leaves r, its body whole, for the SDK and returns
// false.
func (h *Handler) serveFast(w http.ResponseWriter, r *http.Request, st *session, id string, stateless bool) bool {
	if h.slow.Load() || !plainPOST(r, stateless) {
		return false
	}
	var params *sdk.InitializeParams // the session's client: its version and capabilities
	if !stateless {
		if params = st.initialized(id); params == nil {
			return false
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, sdk.DefaultMaxRequestBodyBytes+1))
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil || len(body) > sdk.DefaultMaxRequestBodyBytes {
		return false
	}
	if reqID, ok := cancelOf(body); ok && !stateless {
		if !st.cancel(reqID) {
			return false // not a fast call: the SDK's to cancel
		}
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	call, ok := parseCall(body)
	newer := stateless && r.Header.Get("MCP-Protocol-Version") >= newestProtocol
	if !ok || (newer && !perRequest(r, call)) || (!newer && call.meta.Exists() && !plainMeta(call.meta)) {
		return false
	}
	// Stateless, not search: it marks the listed rows, and which rows are
	// listed takes the projection (a query) this path saves.
	tool := st.tool(r.Context(), call.name)
	if tool == nil || (stateless && call.name == SearchTool) {
		return false // the SDK's unknown tool error, or a tool the SDK's server has
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	if !stateless && !st.start(call.id, cancel) { // the SDK's refusal of an id in flight
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"duplicate in-flight request ID %s"}}`,
			call.id, jsonrpc.CodeInvalidRequest, strings.Trim(call.id, `"`))
		return true
	}
	h.fast.Add(1)
	asked := askedFast(call, r.Header.Get("MCP-Protocol-Version"), params)
	ctx = withAsked(ctx, asked)
	var events *progressStream
	if token := call.meta.Get("progressToken"); token.Exists() && !stateless {
		events = &progressStream{w: w, token: json.RawMessage(token.Raw)}
		ctx = rowcall.WithProgress(ctx, events.progress)
	}
	res := tool(ctx, call.args)
	if !stateless {
		st.finish(call.id)
	}
	var data []byte
	field := ",\"result\":"
	switch {
	case asked.err != nil: // URLElicitationRequiredError (approval.go), as the SDK writes a handler's error
		field = ",\"error\":"
		data, err = json.Marshal(asked.err)
	case newer:
		data, err = newerResult(res, h.implementation())
	default:
		if res.Content == nil {
			res.Content = []sdk.Content{} // as the SDK's callTool: no "null"
		}
		data, err = encodeResult(res)
	}
	if err != nil {
		h.cfg.Fail(w, r, err)
		return true
	}
	b := make([]byte, 0, len(data)+len(call.id)+64)
	b = append(b, "{\"jsonrpc\":\"2.0\",\"id\":"...)
	b = append(b, call.id...)
	b = append(b, field...)
	b = append(b, data...)
	b = append(b, '}')
	if events != nil {
		events.end(b)
		return true
	}
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Content-Type", "application/json") // JSONResponse: the message alone
	w.Write(b)                                 // the whole answer at once: one write, with a Content-Length
	return true
}

// newerResult is res as the SDK writes a result on the newest protocol: the
// server's info in its _meta (beside a row's own, CallMeta), then
// resultType, complete or, when it asks for input (approval.go),
// input_required followed by its inputRequests — the SDK's order
// (CallToolResult.MarshalJSON), with content "null" as the SDK leaves it
// on an input-required result.
func newerResult(res *sdk.CallToolResult, server *sdk.Implementation) ([]byte, error) {
	if res.Meta == nil {
		res.Meta = sdk.Meta{}
	}
	res.Meta[sdk.MetaKeyServerInfo] = server
	inputs := res.InputRequests
	if inputs == nil && res.Content == nil {
		res.Content = []sdk.Content{} // as the SDK's callTool: no "null"
	}
	res.InputRequests = nil
	data, err := res.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if inputs == nil {
		return append(data[:len(data)-1], `,"resultType":"complete"}`...), nil // the field MarshalJSON writes last
	}
	ir, err := json.Marshal(inputs)
	if err != nil {
		return nil, err
	}
	data = append(data[:len(data)-1], `,"resultType":"input_required","inputRequests":`...)
	return append(append(data, ir...), '}'), nil
}

// progressStream answers a call that asked for progress on a session: an
// event stream whose events are its notifications/progress, then its
// response, as the transport lets a server answer a POST (the
// notifications relate to the request, so they go on the request's own
// stream, not the session's GET stream, which a client may not have opened
// yet: RATIONALE.md, "Why does progress travel on the call's own answer?"). The stream opens
// with the first notification; a call that reports none is answered as
// plain JSON.
type progressStream struct {
	w     http.ResponseWriter
	token json.RawMessage
	mu    sync.Mutex
	open  bool // headers written
	done  bool // the response written: later progress is dropped
}

func (p *progressStream) progress(done, total float64, message string) {
	params, err := json.Marshal(&sdk.ProgressNotificationParams{ProgressToken: p.token, Progress: done, Total: total, Message: message})
	if err != nil {
		return
	}
	note := append(append([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":`), params...), '}')
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.event(note)
	}
}

// end writes the response: the last event of an open stream, else the
// message alone.
func (p *progressStream) end(response []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if !p.open {
		p.w.Header().Set("Cache-Control", "no-cache, no-transform")
		p.w.Header().Set("Content-Type", "application/json")
		p.w.Write(response)
		return
	}
	p.event(response)
}

// event writes one SSE event (the transport's "message" event) and flushes
// it; p.mu is held.
func (p *progressStream) event(data []byte) {
	if !p.open {
		hd := p.w.Header()
		hd.Set("Cache-Control", "no-cache, no-transform")
		hd.Set("Content-Type", "text/event-stream")
		p.w.WriteHeader(http.StatusOK)
		p.open = true
	}
	b := make([]byte, 0, len(data)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	p.w.Write(b)
	http.NewResponseController(p.w).Flush()
}

// encodeResult is res as the SDK encodes it (CallToolResult.MarshalJSON),
// for the results rowcall's tools build — a row's call fields in _meta,
// text blocks, structuredContent, isError — without its reflection over the
// wrapper types and the re-compaction of each nested MarshalJSON; anything
// else is encoded by the SDK itself.
func encodeResult(res *sdk.CallToolResult) ([]byte, error) {
	if res.InputRequests != nil || res.RequestState != "" {
		return res.MarshalJSON()
	}
	b := append(make([]byte, 0, 512), '{')
	if res.Meta != nil {
		sc, ok := res.Meta[CallMeta].(*called)
		if !ok || len(res.Meta) != 1 {
			return res.MarshalJSON()
		}
		m, err := json.Marshal(sc)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, `"_meta":{"`+CallMeta+`":`...), m...), "},"...)
	}
	b = append(b, `"content":[`...)
	for i, c := range res.Content {
		t, ok := c.(*sdk.TextContent)
		if !ok || t.Meta != nil || t.Annotations != nil {
			return res.MarshalJSON()
		}
		text, err := json.Marshal(t.Text)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		b = append(append(b, text...), '}')
	}
	b = append(b, ']')
	if res.StructuredContent != nil {
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"structuredContent":`...), sc...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), nil
}

// toolFunc is one of a session's tools: a call's arguments → its result.
type toolFunc func(ctx context.Context, args []byte) *sdk.CallToolResult

// tool is the session's tool name: a meta-tool, or any row the caller may
// see, listed or not (nil for anything else: the SDK's unknown tool).
func (st *session) tool(ctx context.Context, name string) toolFunc {
	switch {
	case name == SearchTool:
		return st.search
	case name == CallTool:
		return st.callCapability
	case st.listed(name) || st.lookup(ctx, name) != nil:
		return st.rowCaller(name)
	}
	return nil
}

// initialized returns the client's initialize of session id when the SDK
// holds it, initialized (nil otherwise).
func (st *session) initialized(id string) *sdk.InitializeParams {
	for ss := range st.server.Sessions() {
		if ss.ID() == id {
			if p := ss.InitializeParams(); p != nil {
				return p
			}
		}
	}
	return nil
}

// start records a fast call in flight (false when its id already is).
func (st *session) start(id string, cancel context.CancelFunc) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.inflight[id]; ok {
		return false
	}
	if st.inflight == nil {
		st.inflight = map[string]context.CancelFunc{}
	}
	st.inflight[id] = cancel
	return true
}

func (st *session) finish(id string) {
	st.mu.Lock()
	delete(st.inflight, id)
	st.mu.Unlock()
}

// cancel cancels the fast call id in flight, if there is one.
func (st *session) cancel(id string) bool {
	st.mu.Lock()
	cancel, ok := st.inflight[id]
	st.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}
