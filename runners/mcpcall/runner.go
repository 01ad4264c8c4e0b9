package mcpcall

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/internal/typed"
	"github.com/rowcall/rowcall/runners/httpcall"
)

// Defaults for Config's zero values.
const (
	DefaultTimeout     = httpcall.DefaultTimeout
	DefaultMaxResponse = httpcall.DefaultMaxResponse
	DefaultIdle        = 10 * time.Minute
	DefaultMaxSessions = 256
)

// Config configures a Runner.
type Config struct {
	// HTTP resolves rows' auth columns (httpcall.Runner.Authorize); its
	// client also runs OAuth token requests.
	HTTP *httpcall.Runner
	// Client is the HTTP transport to MCP servers: the host's outbound
	// policy client, the worker's fetch-based one. nil: a plain client.
	Client *http.Client
	// Stdio runs the operator's stdio servers; nil refuses stdio rows with
	// ERR:mcp:stdio_unavailable (the worker).
	Stdio *Stdio
	// Timeout bounds one call; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxResponse caps each response body and the result, in bytes; 0 means DefaultMaxResponse.
	MaxResponse int64
	// Idle closes a pooled HTTP session unused this long; 0 means DefaultIdle.
	Idle time.Duration
	// MaxSessions bounds the pool (the least recently used session is closed); 0 means DefaultMaxSessions.
	MaxSessions int
	// NoPool makes every call its own session (initialize, call, close): for
	// a platform where a connection cannot outlive the request that made it.
	NoPool bool
	// OnToolsChanged, when set, is told the server ("https://…" or
	// "stdio:NAME", as Target.Server) that sent
	// notifications/tools/list_changed on a pooled session; pooled HTTP
	// sessions then keep the server's stream open to hear it. It must not
	// block.
	OnToolsChanged func(server string)
}

// Runner runs MCP rows. It is safe for concurrent use.
type Runner struct {
	cfg       Config
	pool      *pool
	sdkOnly   bool     // every call through ClientSession.CallTool (fast.go)
	endpoints sync.Map // server URL → the httpcall.TokenEndpoint its metadata names (discover.go)
}

var _ rowcall.Runner = (*Runner)(nil)

// New returns a Runner with cfg, zero fields replaced by their defaults.
func New(cfg Config) *Runner {
	if cfg.HTTP == nil {
		cfg.HTTP = httpcall.New(httpcall.Config{})
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponse <= 0 {
		cfg.MaxResponse = DefaultMaxResponse
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.Stdio != nil && cfg.OnToolsChanged != nil {
		cfg.Stdio.onChanged = cfg.OnToolsChanged
	}
	return &Runner{cfg: cfg, pool: newPool(cfg)}
}

// Close closes every pooled session (the stdio servers are Stdio's).
func (r *Runner) Close() { r.pool.closeAll() }

// Run calls the row's tool. Failures are rowcall.Failure values.
func (r *Runner) Run(ctx context.Context, inv *rowcall.Invocation) rowcall.Output {
	if inv == nil || inv.Row == nil {
		return rowcall.Fail("mcp", "bad_target", "no row").Output()
	}
	ctx = sdkFree{ctx}
	row := inv.Row
	t, err := ParseTarget(row.Target)
	if err != nil {
		return rowcall.Fail("mcp", "bad_target", err.Error()).Output()
	}
	argv := inv.Args
	if argv == nil {
		argv = args.Split(inv.Body)
	}
	arguments, err := toolArguments(row.InputSchema, argv, inv.Body)
	if err != nil {
		return rowcall.Fail("mcp", "bad_args", err.Error()).Output()
	}
	if inv.Shape {
		return rowcall.Output{Result: "SHAPE:mcp:" + t.Server() + "#" + t.Tool,
			Plan: map[string]any{"server": t.Server(), "tool": t.Tool, "arguments": arguments}}
	}
	if row.DocLine("REJECTED") != "" {
		if fail := r.approved(ctx, row, t, inv.Env); fail != nil {
			return fail.Output()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if row.OutputSchema != "" { // its result is the tool's structuredContent (call)
		ctx = context.WithValue(ctx, structuredKey{}, true)
	}
	if t.Stdio != "" {
		if r.cfg.Stdio == nil {
			return stdioUnavailable(t.Stdio, "call "+row.Key+" on the local host, or point the row at the server's streamable HTTP URL").Output()
		}
		return r.callStdio(ctx, t, arguments)
	}
	return r.callHTTP(ctx, row.Key, t, row.Auth, inv.Env, arguments)
}

// stdioUnavailable refuses a stdio server on a host that runs none (the
// worker, which cannot start processes): a call's failure and a listing's.
func stdioUnavailable(name, howToFix string) *rowcall.Failure {
	return rowcall.Fail("mcp", "stdio_unavailable", name).Because("this host runs no stdio MCP servers (the worker cannot start processes); " + howToFix)
}

// toolArguments is the tool's arguments for the call's arguments (the
// package doc).
func toolArguments(inputSchema string, argv []string, body string) (json.RawMessage, error) {
	if s, ok := typed.Named(inputSchema); ok {
		return s.Arguments(argv), nil
	}
	b := strings.TrimSpace(body)
	if b == "" {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if b[0] != '{' || json.Unmarshal([]byte(b), &obj) != nil {
		return nil, errors.New("the row has no input_schema with named properties, so its arguments must be one JSON object (or nothing); give the row an input_schema to pass them separated by '|'")
	}
	return json.RawMessage(b), nil
}

// output renders a tools/call's answer.
func (r *Runner) output(ctx context.Context, res *sdk.CallToolResult, err error, secrets []string) (rowcall.Output, error) {
	if err != nil {
		return rowcall.Output{}, err
	}
	out := rowcall.Output{Material: true, Secrets: secrets}
	structured, _ := ctx.Value(structuredKey{}).(bool)
	text, blocks, err := render(res, structured)
	switch {
	case err != nil:
		out.Fails(rowcall.Fail("mcp", "bad_answer", err.Error()))
	case int64(len(text)) > r.cfg.MaxResponse:
		out.Fails(tooLarge(r.cfg.MaxResponse))
	case res.IsError:
		out.Fails(rowcall.Fail("mcp", "tool_error", redact.String(text, secrets)))
	default:
		out.Result, out.MCPContent = redact.String(text, secrets), blocks
	}
	return out, nil
}

// structuredKey marks a call of a row that declares output_schema: its
// result is the tool's structuredContent alone.
type structuredKey struct{}

// render is a tool result as the row's output (the package doc's Results);
// structured renders a result's structuredContent alone. blocks reports the
// rendering that is MCP's own JSON of the result (rowcall.Output.MCPContent).
func render(res *sdk.CallToolResult, structured bool) (text string, blocks bool, err error) {
	if structured && !res.IsError && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		return string(b), false, err
	}
	texts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		t, ok := c.(*sdk.TextContent)
		if !ok {
			texts = nil
			break
		}
		texts = append(texts, t.Text)
	}
	if texts != nil && res.StructuredContent == nil {
		return strings.Join(texts, "\n"), false, nil
	}
	content := res.Content
	if content == nil {
		content = []sdk.Content{}
	}
	b, err := json.Marshal(struct {
		Content    []sdk.Content `json:"content"`
		Structured any           `json:"structuredContent,omitempty"`
	}{content, res.StructuredContent})
	return string(b), true, err
}

func tooLarge(limit int64) *rowcall.Failure {
	return rowcall.Fail("mcp", "too_large", strconv.FormatInt(limit, 10)+" bytes").Because("the server answered with more, which was not kept; ask the tool for less or raise the runner's response cap")
}

// failure is the output for a call that got no result.
func (r *Runner) failure(parent context.Context, err error, status int, secrets []string) rowcall.Output {
	out := rowcall.Output{Status: status, Secrets: secrets, Material: status != 0}
	var we *jsonrpc.Error
	switch {
	case status == 401 || status == 403:
		out.Fails(rowcall.Fail("mcp", strconv.Itoa(status)).Because("the server refused the row's credential; fix the variable its auth column names"))
	case errors.Is(err, errTooLarge):
		out.Fails(tooLarge(r.cfg.MaxResponse))
	case errors.As(err, &we):
		out.Material = true
		out.Fails(rowcall.Fail("mcp", "rpc", strconv.FormatInt(we.Code, 10), redact.String(we.Message, secrets)))
	case parent.Err() == context.DeadlineExceeded:
		out.Fails(rowcall.Fail("mcp", "fetch", "timeout after "+r.cfg.Timeout.String()))
	default:
		out.Fails(rowcall.Fail("mcp", "fetch", redact.String(httpcall.FetchMessage(err), secrets)))
	}
	return out
}

// sdkFree hides the MCP SDK's own values from a context: a call that arrived
// over an MCP server built on the SDK (rowcall's /mcp) carries that request's
// protocol version in its context, and the SDK's client would send it
// upstream as its own (a 2026-07-28 request to a server that negotiated
// 2025-11-25). Cancellation, deadline and every other value pass through.
type sdkFree struct{ context.Context }

const sdkPackage = "github.com/modelcontextprotocol/go-sdk/mcp"

func (c sdkFree) Value(key any) any {
	if t := reflect.TypeOf(key); t != nil && t.PkgPath() == sdkPackage {
		return nil
	}
	return c.Context.Value(key)
}
