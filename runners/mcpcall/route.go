package mcpcall

import (
	"context"
	"strings"

	"github.com/rowcall/rowcall"
)

// Route is the runner for http rows: rows whose runner column is "mcp" go to
// MCP, every other one to HTTP.
type Route struct {
	HTTP rowcall.Runner
	MCP  rowcall.Runner
}

// Run implements rowcall.Runner.
func (rt Route) Run(ctx context.Context, inv *rowcall.Invocation) rowcall.Output {
	if inv != nil && inv.Row != nil && strings.EqualFold(inv.Row.Runner, "mcp") {
		return rt.MCP.Run(ctx, inv)
	}
	return rt.HTTP.Run(ctx, inv)
}
