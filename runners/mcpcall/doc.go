// Package mcpcall is the runner for MCP tools as rows: an http row whose
// runner column is "mcp" calls one tool of a Model Context Protocol server,
// through the official Go SDK's client (github.com/modelcontextprotocol/go-sdk).
//
// # Target
//
// The row's target names the server and the tool:
//
//	MCP https://mcp.example.com/mcp#create_issue   a streamable HTTP server
//	MCP stdio:github#create_issue                  a stdio server the operator declared
//
// The word MCP, one space, the server, '#', the tool's name as the server
// lists it. The URL is used as written (no $N references). A stdio server is
// named, never described: only the operator's configuration file (Stdio, read
// by ReadConfig) says what command a name starts, so writing a row can never
// start a process.
//
// # Arguments
//
// The call's pipe-separated arguments become the tool's arguments by the one
// named-arguments rule (internal/typed): mapped in order onto the row's
// input_schema properties, each read as its type says. A row without named
// properties passes its body as the arguments when it is a JSON object, and
// {} when it is empty. The row's payload is not sent.
//
// # Credentials
//
// The row's auth column means what it means on any http row (bearer:,
// basic:, headers:, query:, oauth: — runners/httpcall's Authorize): the
// headers are put on requests to the server's origin only (scheme, host and
// port), never on a redirect elsewhere. Sessions are pooled per server and
// credential: a rotated credential gets a new session; a session the server
// has expired (404 on its id) is initialized again and the call sent once
// more. Stdio servers take no row credential (their environment is the
// operator's).
//
// An oauth: column without token_url is completed by the server, as the MCP
// authorization spec describes: the first call goes without a token, the
// server's 401 names its protected resource metadata (RFC 9728; else the
// well-known locations, and its resource must be the server's URL), which
// names the authorization server, whose metadata (RFC 8414 or OpenID
// discovery, through the SDK's oauthex) names the token endpoint. The
// endpoint is kept per server; the token is httpcall's, cached per
// credential. A client with a private_key signs its assertion for the
// authorization server's issuer (SEP-1046's client credentials with
// private_key_jwt). Metadata that does not check out fails the call with
// ERR:mcp:auth_discovery:<message> (write token_url to pin the endpoint).
// A response stream the server ends after an event id is resumed with
// Last-Event-ID after the server's retry delay, at most twice without
// progress.
//
// # Results
//
//	structuredContent, the row
//	declaring output_schema    the structured content alone, as JSON (what the
//	                           row's output_schema describes)
//	only text blocks           the texts, joined by "\n"
//	anything else              {"content":[…],"structuredContent":…} — MCP's own
//	                           JSON for the content blocks (image and audio data
//	                           base64, resources and links as sent), and the
//	                           structured content when the tool gave one
//	isError                    ERR:mcp:tool_error:<the same rendering>
//	JSON-RPC error             ERR:mcp:rpc:<code>:<message>
//	no answer                  ERR:mcp:fetch:<message>   (outbound policy, refused, crashed)
//	timeout                    ERR:mcp:fetch:timeout after 30s
//	401 / 403                  ERR:mcp:401 (Status set: the dispatcher's breaker counts it)
//	too large                  ERR:mcp:too_large:<limit> bytes
//	bad target                 ERR:mcp:bad_target:<message>
//	no token endpoint found    ERR:mcp:auth_discovery:<message>
//	stdio on the worker        ERR:mcp:stdio_unavailable:<NAME>
//	unknown stdio name         ERR:mcp:unknown_server:<NAME>
//	rejected definition        ERR:mcp:definition_rejected:<the server's fingerprint>
//
// A row whose owner rejected a changed definition of its tool (a "# REJECTED:"
// line, internal/mcpimport.Sync) is called only while the server lists the
// approved definition (its "# UPSTREAM:" line): the tools are listed before
// each such call, and the call is not sent otherwise.
//
// The "anything else" rendering sets rowcall.Output.MCPContent: an MCP
// client of rowcall's /mcp is answered the blocks and structured content
// themselves (images as images, resource links as resource links), every
// other caller gets the JSON text. A call whose context carries a
// rowcall.Progress sends the tool a progressToken, and the server's
// notifications/progress for it are passed on to that Progress (progress.go).
//
// Every result and failure is passed through redact.String with the
// credential values used. A cancelled call (the caller's context ends) is
// cancelled upstream too (notifications/cancelled). The HTTP transport is
// Config.Client: the host passes the outbound policy's client (the SSRF
// policy and outbound.CheckRedirect), the worker its fetch-based one. Every
// response body is capped at Config.MaxResponse.
//
// # Shape mode
//
// With Invocation.Shape nothing is sent: Plan is {"server","tool","arguments"}
// and Result SHAPE:mcp:<server>#<tool>.
//
// Route puts the runner behind the http row type: rows whose runner is "mcp"
// reach it, every other http row the http runner.
package mcpcall
