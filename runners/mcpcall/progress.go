package mcpcall

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
)

// Upstream progress. A call whose context carries a rowcall.Progress (the
// MCP server's, for a client that sent a progressToken) sends the tool a
// progressToken of its own, and each notifications/progress the server
// sends for that token is passed on as (progress, total, message): on the
// fast path from the call's event stream (fast.go), on the SDK's sessions
// through the client's ProgressNotificationHandler (newClient). A token is
// random and held with the server it was sent to, so a server cannot report
// progress on another server's call; it is forgotten when the call returns.

// progressNote is the method of a progress notification.
const progressNote = "notifications/progress"

// listening is one call's progress: its server and where it goes.
type listening struct {
	server string
	p      rowcall.Progress
}

// listeners holds the calls in flight that asked for progress, by token.
var listeners sync.Map // string → listening

// listen registers the call's Progress, when ctx carries one, under a new
// token sent to server; it returns the token ("" when ctx carries none)
// and the func that forgets it.
func listen(ctx context.Context, server string) (token string, forget func()) {
	p := rowcall.ProgressOf(ctx)
	if p == nil {
		return "", func() {}
	}
	b := make([]byte, 12)
	rand.Read(b)
	token = "rowcall-" + hex.EncodeToString(b)
	listeners.Store(token, listening{server: server, p: p})
	return token, func() { listeners.Delete(token) }
}

// relay passes a progress notification from server on to the call that
// sent its token; any other is dropped.
func relay(server string, n *sdk.ProgressNotificationParams) {
	token, _ := n.ProgressToken.(string)
	if l, ok := listeners.Load(token); ok && l.(listening).server == server {
		l.(listening).p(n.Progress, n.Total, n.Message)
	}
}

// relayRaw is relay for a notification's params as sent.
func relayRaw(server string, params json.RawMessage) {
	var n sdk.ProgressNotificationParams
	if json.Unmarshal(params, &n) == nil {
		relay(server, &n)
	}
}

// callSDK is a tools/call through the SDK's session cs with server,
// asking for progress when ctx listens for it.
func callSDK(ctx context.Context, cs *sdk.ClientSession, server, tool string, arguments json.RawMessage) (*sdk.CallToolResult, error) {
	params := &sdk.CallToolParams{Name: tool, Arguments: arguments}
	if token, forget := listen(ctx, server); token != "" {
		defer forget()
		params.SetProgressToken(token)
	}
	return cs.CallTool(ctx, params)
}
