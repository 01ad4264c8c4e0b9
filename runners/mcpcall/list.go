package mcpcall

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
)

// ListTools returns every tool the server lists (tools/list, all pages),
// each inputSchema as the server sent it (property order kept), and the
// credential values used, to redact from what the server wrote. server is a
// target's server part: an http(s) URL or stdio:NAME; auth and env are a
// row's auth column and credential environment, as a call's. A server that
// answers 401 to a request without auth and names an authorization server
// gives a *SignInRequired error.
func (r *Runner) ListTools(ctx context.Context, server, auth string, env rowcall.Env) (tools []*sdk.Tool, secrets []string, err error) {
	t, err := ParseTarget("MCP " + server + "#tools/list")
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(sdkFree{ctx}, r.cfg.Timeout)
	defer cancel()
	list := func(ctx context.Context, cs *sdk.ClientSession) error {
		tools = tools[:0]
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			tools = append(tools, tool)
		}
		return nil
	}
	if t.Stdio != "" {
		if r.cfg.Stdio == nil {
			return nil, nil, errors.New(stdioUnavailable(t.Stdio, "import it on a local host whose ROWCALL_MCP_SERVERS declares it, or import the server's streamable HTTP URL").String())
		}
		cs, sch, fail := r.cfg.Stdio.sessionOf(ctx, t.Stdio)
		if fail != nil {
			return nil, nil, errors.New(fail.String())
		}
		if err := list(ctx, cs); err != nil {
			r.cfg.Stdio.broken(t.Stdio, cs)
			return nil, nil, err
		}
		sch.restore(tools)
		return tools, nil, nil
	}
	fail, ref := r.authorized(ctx, server, t.URL, auth, env, func(ctx context.Context, s *httpSession, used []string) error {
		secrets = used
		if err := list(ctx, s.cs); err != nil {
			return err
		}
		s.inject.schemas.restore(tools)
		return nil
	})
	if fail.Failed() && ref.status == http.StatusUnauthorized && strings.TrimSpace(auth) == "" {
		as, err := r.authServer(ctx, t.URL, ref.challenge, true)
		if err != nil {
			return nil, nil, fmt.Errorf("%s; its authorization server could not be found: %w", fail.Result, err)
		}
		return nil, nil, &SignInRequired{Server: server, Auth: as}
	}
	if fail.Failed() {
		return nil, nil, errors.New(fail.Result)
	}
	return tools, secrets, nil
}
