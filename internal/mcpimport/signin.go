package mcpimport

import (
	"context"
	"errors"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/connect"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

// List lists server's tools for an import with auth (a row's auth column).
// Without auth, a server that asks for a person's sign-in
// (mcpcall.SignInRequired) has the host registered as its client
// (connect.Service.RegisterMCP: a provider like any other, kept in the
// database) and is listed with holder's connection to that provider: rowAuth
// is then bearer:connection:NAME, the auth of the rows the import makes.
// Until holder has connected, err is an EConnectionRequired rowcall.Error
// whose Extra connect_url is the link a person opens to sign in; the import
// is then made again. svc nil: a server that asks for a sign-in is an
// error saying what the operator sets.
func List(ctx context.Context, r *mcpcall.Runner, svc *connect.Service, holder, server, auth string, env rowcall.Env) (tools []*sdk.Tool, secrets []string, rowAuth string, err error) {
	tools, secrets, err = r.ListTools(ctx, server, auth, env)
	var need *mcpcall.SignInRequired
	if !errors.As(err, &need) {
		return tools, secrets, auth, err
	}
	if svc == nil || svc.Registry == nil {
		return nil, nil, "", &rowcall.Error{Code: rowcall.EInvalid, Status: http.StatusBadGateway,
			Message:  need.Error() + ", and this host keeps no connections",
			HowToFix: "set ROWCALL_CONNECTIONS_KEY (docs/tokens.md#connections) so a person can sign in once, or import with an auth the server accepts (an oauth: client's credentials, a bearer:ENV token)"}
	}
	name, err := svc.RegisterMCP(ctx, server, need.Auth.Resource, need.Auth.Scopes, need.Auth.Meta)
	if err != nil {
		return nil, nil, "", &rowcall.Error{Code: rowcall.EInvalid, Status: http.StatusBadGateway,
			Message:  need.Error() + ", and the host could not register as its client: " + err.Error(),
			HowToFix: "ask the server's operator for a client id, list it in ROWCALL_CONNECTIONS with the server's endpoints and its URL as resource, and import with auth=bearer:connection:NAME"}
	}
	rowAuth = "bearer:connection:" + name
	if _, fail := svc.Token(ctx, holder, name); fail != nil {
		if fail.Code != "connection_required" && fail.Code != "connection_expired" && fail.Code != "connection_unreadable" {
			return nil, nil, "", errors.New(fail.String())
		}
		return nil, nil, "", &rowcall.Error{Code: rowcall.EConnectionRequired, Args: []string{name}, Status: http.StatusConflict,
			Message:  server + " needs a person's sign-in: the host registered as its client, provider " + name,
			HowToFix: "open connect_url in a browser and sign in (the link works for 15 minutes), then import again: the rows call the server with " + rowAuth,
			Extra:    map[string]any{"connect_url": svc.Link(ctx, holder, name), "provider": name, "auth": rowAuth}}
	}
	ctx = rowcall.WithConnector(ctx, func(ctx context.Context, p string) (string, *rowcall.Failure) { return svc.Token(ctx, holder, p) })
	tools, secrets, err = r.ListTools(ctx, server, rowAuth, env)
	return tools, secrets, rowAuth, err
}
