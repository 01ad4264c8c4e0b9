package app_test

import (
	"strings"
	"testing"

	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/runners/agent"
)

// One name means one thing on every host: both read their settings through
// ReadSettings (the worker from its vars and secrets, the local host from its
// flags, whose defaults are the same names in the environment).
func TestReadSettings(t *testing.T) {
	env := map[string]string{
		"ROWCALL_AUDIENCE": "edge", "ROWCALL_PUBLIC_READS": "yes", "ROWCALL_PUBLIC_URL": "https://r.example",
		"ROWCALL_TRUST_FORWARDED": "1", "ROWCALL_ALLOW_OUTBOUND": "127.0.0.1:9000", "ROWCALL_SECRETS_PREFIX": "ROWS_",
		"ROWCALL_NO_EXAMPLES": "true", "ROWCALL_MODEL_PROVIDERS": "x=http://127.0.0.1:1/v1",
		"ROWCALL_MODEL_DEFAULT": "x", "ROWCALL_MODEL_PRICES": `{"m":{"input":1,"output":2}}`,
		"ROWCALL_EMBED_PROVIDER": "x", "ROWCALL_EMBED_MODEL": "nomic-embed-text", "ROWCALL_EMBED_AUTH": "bearer:EMB_KEY",
		"ROWCALL_EMBED_DIM": "768", "ROWCALL_ASK_RERANK": "ASK_RERANK",
		"ROWCALL_ASK_RERANK_ANONYMOUS": "10/minute", "ROWCALL_APPROVAL_NOTIFY": "NOTIFY",
		"ROWCALL_ASK_EXPAND": "ASK_EXPAND", "ROWCALL_ASK_EXPAND_DAILY_USD": "0.25", "ROWCALL_ASK_LEARN": "off", "ROWCALL_MCP_TOOLS": "20", "ROWCALL_MCP_ORIGINS": "https://c.example", "ROWCALL_MCP_IDLE": "2m", "ROWCALL_MCP_SESSIONS": "50",
		"ROWCALL_MCP_SESSIONS_PER_CREDENTIAL": "4", "ROWCALL_MCP_DRIFT": "warn",
		"ROWCALL_OIDC_ISSUER": "https://login.example/realms/acme", "ROWCALL_OIDC_CLIENT_ID": "rowcall", "ROWCALL_OIDC_CLIENT_SECRET": "s",
		"ROWCALL_OIDC_ROLES": "a=admin", "ROWCALL_OIDC_NAME": "Acme", "ROWCALL_OIDC_GROUPS_CLAIM": "roles", "ROWCALL_OIDC_SCOPES": "groups",
		"ROWCALL_OWNER_KEY_LOOPBACK_ONLY": "yes",
		"ROWCALL_SCIM_TOKEN":              " scim-token-of-at-least-thirty-two-chars ",
	}
	read := map[string]bool{}
	got := app.ReadSettings(func(name string) string { read[name] = true; return env[name] })
	want := app.Settings{Audience: "edge", PublicReads: true, PublicURL: "https://r.example", TrustForwarded: true,
		AllowOutbound: "127.0.0.1:9000", SecretsPrefix: "ROWS_", NoExamples: true,
		Models: agent.Settings{Providers: "x=http://127.0.0.1:1/v1", Default: "x", Prices: `{"m":{"input":1,"output":2}}`},
		Embed:  app.EmbedSettings{Provider: "x", Model: "nomic-embed-text", Auth: "bearer:EMB_KEY", Dim: "768"}, AskRerank: "ASK_RERANK",
		AskRerankAnonymous: "10/minute", ApprovalNotify: "NOTIFY", AskExpand: "ASK_EXPAND", AskExpandDailyUSD: "0.25", AskLearn: "off",
		MCP: app.MCPSettings{Tools: "20", Origins: "https://c.example", Idle: "2m", Sessions: "50", PerCredential: "4", Drift: "warn"},
		OIDC: app.OIDCSettings{Issuer: "https://login.example/realms/acme", ClientID: "rowcall", ClientSecret: "s", Roles: "a=admin", Name: "Acme",
			GroupsClaim: "roles", Scopes: "groups"}, OwnerKeyLoopbackOnly: true,
		SCIM: app.SCIMSettings{Token: "scim-token-of-at-least-thirty-two-chars", Issuer: "https://login.example/realms/acme"}}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for name := range read {
		if _, ok := env[name]; !ok {
			t.Errorf("ReadSettings reads %s, which this test does not set", name)
		}
	}
	if d := app.ReadSettings(func(string) string { return "" }); d.Audience != "rowcall" || d.PublicReads || d.NoExamples || d.Embed.Provider != "" || d.OIDC.GroupsClaim != "groups" || d.OwnerKeyLoopbackOnly {
		t.Fatalf("defaults %+v", d)
	}
	if off := app.ReadSettings(func(n string) string { return map[string]string{"ROWCALL_PUBLIC_READS": "false"}[n] }); off.PublicReads {
		t.Fatal(`"false" read as on`)
	}
}

// ROWCALL_MCP_TOOLS: a number lists that many rows, 0 none (mcp.Limits'
// negative), unset the default; anything else names the setting.
func TestMCPToolsSetting(t *testing.T) {
	for v, want := range map[string]int{"": 0, "20": 20, "0": -1} {
		if l, err := (app.MCPSettings{Tools: v}).Limits(); err != nil || l.MaxTools != want {
			t.Errorf("ROWCALL_MCP_TOOLS=%q: MaxTools %d (%v), want %d", v, l.MaxTools, err, want)
		}
	}
	for _, v := range []string{"-1", "many"} {
		if _, err := (app.MCPSettings{Tools: v}).Limits(); err == nil || !strings.Contains(err.Error(), "ROWCALL_MCP_TOOLS") {
			t.Errorf("ROWCALL_MCP_TOOLS=%q: %v", v, err)
		}
	}
}
