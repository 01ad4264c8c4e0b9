package httpcall

import (
	"context"
	"maps"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
)

// withSelf returns inv with $SELF (args.Self) set to this host's base URL
// (Config.Self) when the row refers to it; inv itself otherwise.
func (r *Runner) withSelf(ctx context.Context, inv *rowcall.Invocation) *rowcall.Invocation {
	if r.self == nil || (!strings.Contains(inv.Row.Target, "$"+args.Self) && !strings.Contains(inv.Row.Content, "$"+args.Self)) {
		return inv
	}
	base := strings.TrimRight(r.self(ctx), "/")
	if base == "" {
		return inv
	}
	cp := *inv
	cp.Vars = make(map[string]string, len(inv.Vars)+1)
	maps.Copy(cp.Vars, inv.Vars)
	cp.Vars[args.Self] = base
	return &cp
}
