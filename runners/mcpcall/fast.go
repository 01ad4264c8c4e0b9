package mcpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path: a tools/call on a pooled HTTP session is sent here as one
// JSON-RPC POST instead of through ClientSession.CallTool (whose JSON-RPC
// connection, stream-reading goroutine and per-call bookkeeping cost about
// what the upstream's own handling does; BenchmarkMCPOverhead). The request
// is the SDK's: the same body, the session id and negotiated protocol
// version the SDK session holds, the same Content-Type and Accept, sent
// through the session's client (the row's credential injected, every body
// capped). The answer is read as the SDK reads it, a JSON body or an SSE
// stream whose response event ends the call (notifications are skipped; a
// server's request is answered as the SDK's client answers it), and decoded
// into the SDK's CallToolResult (a plain answer without the SDK's decoder:
// answer.go), so results are the SDK path's
// (TestFastPathAnswersAsTheSDK calls every tool both ways). What the SDK did
// around a call and the fast path does the same way: a 404 on a session is
// sdk.ErrSessionMissing (the pool initializes anew), a call whose context
// ends sends notifications/cancelled, a stream the server ends after an
// event id is resumed with Last-Event-ID. Sessions on the 2026-07-28
// protocol (per-request _meta, standard headers) and stdio sessions stay
// the SDK's.

// fastIDBase starts the fast path's request ids far above the SDK's own
// counter on the same session, so the two never send the same id.
const fastIDBase = 1 << 40

// fastSince is the first protocol version the fast path leaves to the SDK.
const fastSince = "2026-07-28"

// fastVersion is the protocol version the fast path sends on cs, and false
// when cs is one the fast path does not speak.
func fastVersion(cs *sdk.ClientSession) (string, bool) {
	res := cs.InitializeResult()
	if res == nil || res.ProtocolVersion == "" || res.ProtocolVersion >= fastSince {
		return "", false
	}
	return res.ProtocolVersion, true
}

// callTool sends one tools/call on s: the fast path when s's session is one
// it speaks, else the SDK's CallTool.
func (r *Runner) callTool(ctx context.Context, s *httpSession, tool string, arguments json.RawMessage) (*sdk.CallToolResult, error) {
	version, ok := fastVersion(s.cs)
	if !ok || r.sdkOnly {
		return callSDK(ctx, s.cs, s.url, tool, arguments)
	}
	f := fastCall{s: s, url: s.url, session: s.cs.ID(), version: version, id: fastIDBase + s.ids.Add(1)}
	token, forget := listen(ctx, s.url)
	defer forget()
	msg, err := f.send(ctx, tool, arguments, token)
	if err != nil {
		if ctx.Err() != nil {
			go f.cancelled(ctx, ctx.Err().Error())
			return nil, ctx.Err()
		}
		return nil, err
	}
	if msg.Error != nil {
		return nil, fmt.Errorf("calling %q: %w", "tools/call", msg.Error)
	}
	res, err := callResult(msg.Result)
	if err != nil {
		return nil, fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	return res, nil
}

// fastCall is one tools/call on a session.
type fastCall struct {
	s       *httpSession
	url     string
	session string // the Mcp-Session-Id, "" on a server that keeps none
	version string
	id      int64
	rest    io.ReadCloser // the event stream the answer came on, its end not yet read
}

const summary = `sending "tools/call"`

// send posts the call and returns its response.
//
// An answer on an event stream is returned as soon as it is read; the
// stream's end (the server ends it after the answer) is read after, by
// finish, so the connection goes back to the transport for the next call: a
// body closed before its end costs the next call a new connection, a dial
// here and a new connection's work on the server. So the request runs on a
// context of its own, ended with ctx while the call lasts and by finish after.
func (f *fastCall) send(ctx context.Context, tool string, arguments json.RawMessage, progressToken string) (*jsonrpc.Response, error) {
	body, err := callBody(f.id, tool, arguments, progressToken)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	defer func() {
		live := stop() // false once ctx ended: the request ends with it
		if f.rest != nil && live {
			go finish(f.rest, cancel)
			return
		}
		if f.rest != nil {
			f.rest.Close()
		}
		cancel()
	}()
	ctx = rctx
	resp, err := f.post(ctx, body)
	if err != nil {
		return nil, err
	}
	if err := f.check(resp); err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		m, err := response(b, f.id)
		if err != nil {
			return nil, fmt.Errorf("%s: failed to decode response: %v", summary, err)
		}
		if r, ok := m.(*jsonrpc.Response); ok && r.ID.Raw() == f.id {
			return r, nil
		}
		return nil, fmt.Errorf("%s: the server answered with another message", summary)
	case "text/event-stream":
		return f.stream(ctx, resp)
	default:
		resp.Body.Close()
		return nil, fmt.Errorf("%s: unsupported content type %q", summary, ct)
	}
}

// callBody is the request the SDK's CallTool encodes (the params' fields in
// CallToolParams' order, the arguments compacted and HTML-escaped), written without
// reflection; with a progressToken ("" for none) in its _meta.
func callBody(id int64, tool string, arguments json.RawMessage, progressToken string) ([]byte, error) {
	if len(arguments) == 0 {
		arguments = json.RawMessage("{}")
	}
	name, err := json.Marshal(tool)
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer(make([]byte, 0, 96+len(name)+len(arguments)))
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(strconv.FormatInt(id, 10))
	b.WriteString(`,"method":"tools/call","params":{`)
	if progressToken != "" {
		token, err := json.Marshal(progressToken)
		if err != nil {
			return nil, err
		}
		b.WriteString(`"_meta":{"progressToken":`)
		b.Write(token)
		b.WriteString(`},`)
	}
	b.WriteString(`"name":`)
	b.Write(name)
	b.WriteString(`,"arguments":`)
	var compact bytes.Buffer
	if err := json.Compact(&compact, arguments); err != nil {
		return nil, err
	}
	json.HTMLEscape(b, compact.Bytes()) // as json.Marshal writes a RawMessage
	b.WriteString("}}")
	return b.Bytes(), nil
}

// post sends one JSON-RPC message on the session.
func (f *fastCall) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.WithValue(ctx, notListing{}, true), http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	f.headers(req)
	return f.s.client.Do(req)
}

func (f *fastCall) headers(req *http.Request) {
	req.Header.Set("Mcp-Protocol-Version", f.version)
	if f.session != "" {
		req.Header.Set("Mcp-Session-Id", f.session)
	}
}

// check is the SDK's reading of a response's status (its checkResponse);
// the body is closed when it returns an error.
func (f *fastCall) check(resp *http.Response) (err error) {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	defer resp.Body.Close()
	status := http.StatusText(resp.StatusCode)
	switch resp.StatusCode {
	case 502, 503, 504, 429:
		return fmt.Errorf("%s: %v", summary, status)
	}
	b, _ := io.ReadAll(resp.Body)
	if m, _ := jsonrpc.DecodeMessage(b); m != nil {
		if r, ok := m.(*jsonrpc.Response); ok && r.Error != nil {
			return fmt.Errorf("%s: %w: %v", summary, r.Error, status)
		}
	}
	if resp.StatusCode == http.StatusNotFound && f.session != "" {
		return fmt.Errorf("%s: failed to connect (session ID: %v): %w", summary, f.session, sdk.ErrSessionMissing)
	}
	return fmt.Errorf("%s: %v", summary, status)
}

// stream reads an SSE answer until the call's response, resuming a stream
// the server ends after an event id (at most resumeRetries times without
// progress), as the SDK's client does.
func (f *fastCall) stream(ctx context.Context, resp *http.Response) (*jsonrpc.Response, error) {
	var prev string
	retries := 0
	for {
		r, last, delay, err := f.events(ctx, resp)
		if r != nil || err != nil {
			return r, err
		}
		if last == "" {
			return nil, fmt.Errorf("calling %q: request terminated without response", "tools/call")
		}
		if last != prev {
			prev, retries = last, 0
		} else if retries++; retries > resumeRetries {
			return nil, fmt.Errorf("%s: exceeded %d retries without progress (session ID: %v)", summary, resumeRetries, f.session)
		}
		if delay <= 0 {
			delay = time.Second
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		req, err := http.NewRequestWithContext(context.WithValue(ctx, notListing{}, true), http.MethodGet, f.url, nil)
		if err != nil {
			return nil, err
		}
		f.headers(req)
		req.Header.Set("Last-Event-ID", last)
		req.Header.Set("Accept", "text/event-stream")
		if resp, err = f.s.client.Do(req); err != nil {
			return nil, fmt.Errorf("%s: failed to reconnect (session ID: %v): %v", summary, f.session, err)
		}
		if err := f.check(resp); err != nil {
			return nil, err
		}
	}
}

// events reads one SSE body (sse.go): the call's response when it came,
// else the last event id and the server's retry delay.
func (f *fastCall) events(ctx context.Context, resp *http.Response) (r *jsonrpc.Response, last string, delay time.Duration, err error) {
	defer func() {
		if r != nil {
			f.rest = resp.Body // its end is read by finish
			return
		}
		resp.Body.Close()
	}()
	sr := newSSEReader(resp.Body)
	defer sr.release()
	for {
		ev, rerr := sr.next()
		if rerr != nil {
			if ctx.Err() != nil {
				return nil, "", 0, ctx.Err()
			}
			if errors.Is(rerr, errTooLarge) {
				return nil, "", 0, rerr
			}
			return nil, sr.lastID, sr.retry, nil // the server ended the stream
		}
		if len(ev.data) == 0 || (ev.name != "" && ev.name != "message") { // an event without data primes a resumable stream
			continue
		}
		m, derr := response(ev.data, f.id)
		if derr != nil {
			return nil, "", 0, fmt.Errorf("%s: failed to decode event: %v", summary, derr)
		}
		if r, ok := m.(*jsonrpc.Response); ok && r.ID.Raw() == f.id {
			return r, "", 0, nil
		}
		if q, ok := m.(*jsonrpc.Request); ok && q.IsCall() {
			f.answer(ctx, q)
		} else if ok && q.Method == progressNote {
			relayRaw(f.url, q.Params)
		}
	}
}

// finish reads the end of an event stream whose answer was read, at most
// drainMax bytes for at most drainFor, then closes it and ends its request
// (done): a stream read to its end leaves its connection to the transport.
func finish(body io.ReadCloser, done context.CancelFunc) {
	t := time.AfterFunc(drainFor, done)
	defer t.Stop()
	defer done()
	io.CopyN(io.Discard, body, drainMax)
	body.Close()
}

// The bounds of finish: a server ends the stream right after the answer,
// and one that goes on loses the connection.
const (
	drainMax = 64 << 10
	drainFor = time.Second
)

// answer replies to a server's request made during the call as the SDK's
// client (made with no handlers) replies.
func (f *fastCall) answer(ctx context.Context, q *jsonrpc.Request) {
	reply := &jsonrpc.Response{ID: q.ID}
	switch q.Method {
	case "ping":
		reply.Result = json.RawMessage("{}")
	case "roots/list":
		reply.Result = json.RawMessage(`{"roots":[]}`)
	case "elicitation/create":
		reply.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "client does not support elicitation"}
	case "sampling/createMessage":
		reply.Error = &jsonrpc.Error{Code: codeUnsupportedMethod, Message: "client does not support CreateMessage"}
	default:
		reply.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
	}
	b, err := jsonrpc.EncodeMessage(reply)
	if err != nil {
		return
	}
	if resp, err := f.post(ctx, b); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// codeUnsupportedMethod is the SDK's error code for a method its client has no handler for.
const codeUnsupportedMethod = -31001

// cancelled tells the server the call was abandoned (notifications/cancelled,
// best effort, bounded as the SDK bounds it).
func (f *fastCall) cancelled(ctx context.Context, reason string) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": sdk.CancelledParams{Reason: reason, RequestID: f.id}})
	if err != nil {
		return
	}
	if resp, err := f.post(ctx, b); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
