//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/rowcall/rowcall"
)

// Credentials: a request's handle is the rowcall.Env its rows read, from that
// request's env: its secrets and string vars, as rowcall.SecretsEnv lets rows
// see them (requestEnv). Bindings (D1, R2, …) are not strings and are never
// returned, and neither is any of rowcall's own settings and secrets (the
// receipt signing key above all). The owner key is, as on the host, so rows
// can call this API (the seed's DIR_PATCH).

// Lookup implements rowcall.Env.
func (h *reqHandle) Lookup(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	return h.str(name)
}

// str returns a string var or secret of the request's env.
func (h *reqHandle) str(name string) (string, bool) {
	v := h.env.Get(name)
	if v.Type().String() != "string" {
		return "", false
	}
	return v.String(), true
}

// setting returns a setting (any string var or secret), "" when unset.
func (h *reqHandle) setting(name string) string {
	s, _ := h.str(name)
	return s
}

// noEnv is the Env outside any request: it has nothing.
type noEnv struct{}

func (noEnv) Lookup(string) (string, bool) { return "", false }

// requestEnv makes every runner read credentials from the env of the request
// its call belongs to: the dispatcher is shared by every request the Go
// instance serves, so its own Env (noEnv) is replaced per call here.
type requestEnv struct {
	next          rowcall.Runner
	secretsPrefix string // ROWCALL_SECRETS_PREFIX
}

func (r requestEnv) Run(ctx context.Context, inv *rowcall.Invocation) rowcall.Output {
	inv.Env = envOf(ctx, r.secretsPrefix)
	return r.next.Run(ctx, inv)
}

// envOf is the Env of the request ctx belongs to, as rows see it (noEnv
// outside any request): each call's (requestEnv), and the one an MCP
// import or sync lists the server's tools with (app.Platform.RequestEnv).
func envOf(ctx context.Context, secretsPrefix string) rowcall.Env {
	if h, ok := ctx.Value(handleKey{}).(*reqHandle); ok {
		return rowcall.SecretsEnv(h, secretsPrefix)
	}
	return noEnv{}
}

// jsonObject encodes alternating keys and string values as one JSON object,
// in order.
func jsonObject(kv ...string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}
