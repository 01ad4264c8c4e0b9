package hostmain

import (
	"context"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/internal/app"
)

// Every setting app.ReadSettings reads (the worker's vars, by the same names)
// means the same on the local host: the host's settings from an environment
// that sets them all are what ReadSettings gives for it, whether a setting
// reaches the host through its flag's variable or directly.
func TestSettingsMeanWhatTheWorkerReads(t *testing.T) {
	samples := map[string]string{
		"ROWCALL_AUDIENCE":                    "aud-test",
		"ROWCALL_PUBLIC_READS":                "yes",
		"ROWCALL_PUBLIC_URL":                  "https://rowcall.example.test",
		"ROWCALL_TRUST_FORWARDED":             "on",
		"ROWCALL_ALLOW_OUTBOUND":              "127.0.0.1/32, 10.0.0.0/8",
		"ROWCALL_SECRETS_PREFIX":              "ROWS_",
		"ROWCALL_NO_EXAMPLES":                 "1",
		"ROWCALL_MODEL_PROVIDERS":             "a=http://127.0.0.1:9/v1 b=http://127.0.0.1:9/v2,no-tools",
		"ROWCALL_MODEL_DEFAULT":               "b",
		"ROWCALL_MODEL_PRICES":                `{"m":{"input":1,"output":2}}`,
		"ROWCALL_EMBED_PROVIDER":              "b",
		"ROWCALL_EMBED_MODEL":                 "nomic-embed-text",
		"ROWCALL_EMBED_AUTH":                  "bearer:ROWS_EMBED_KEY",
		"ROWCALL_EMBED_DIM":                   "768",
		"ROWCALL_ASK_RERANK":                  "ASK_RERANK",
		"ROWCALL_ASK_RERANK_ANONYMOUS":        "10/minute",
		"ROWCALL_APPROVAL_NOTIFY":             "NOTIFY",
		"ROWCALL_ASK_EXPAND":                  "ASK_EXPAND",
		"ROWCALL_ASK_EXPAND_DAILY_USD":        "0.5",
		"ROWCALL_ASK_LEARN":                   "tokens",
		"ROWCALL_MCP_TOOLS":                   "20",
		"ROWCALL_MCP_ORIGINS":                 "https://console.example.test",
		"ROWCALL_MCP_IDLE":                    "2m0s",
		"ROWCALL_MCP_SESSIONS":                "50",
		"ROWCALL_MCP_SESSIONS_PER_CREDENTIAL": "4",
		"ROWCALL_MCP_DRIFT":                   "warn",
		"ROWCALL_OIDC_ISSUER":                 "https://login.example.test/realms/acme",
		"ROWCALL_OIDC_CLIENT_ID":              "rowcall",
		"ROWCALL_OIDC_CLIENT_SECRET":          "oidc-secret",
		"ROWCALL_OIDC_ROLES":                  "tools-admins=admin,tools-editors=editor",
		"ROWCALL_OIDC_NAME":                   "Acme SSO",
		"ROWCALL_OIDC_GROUPS_CLAIM":           "roles",
		"ROWCALL_OIDC_SCOPES":                 "groups offline_access",
		"ROWCALL_OWNER_KEY_LOOPBACK_ONLY":     "on",
		"ROWCALL_SCIM_TOKEN":                  "scim-token-of-at-least-thirty-two-chars",
	}
	app.ReadSettings(func(name string) string {
		if _, ok := samples[name]; !ok {
			t.Errorf("app.ReadSettings reads %s, which this test has no sample of: add one", name)
		}
		return ""
	})
	lookup := func(name string) (string, bool) { v, ok := samples[name]; return v, ok }
	m := NewMain()
	m.LookupEnv = lookup
	if err := m.ParseFlags(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want := app.ReadSettings(func(name string) string { v, _ := lookup(name); return v })
	if !reflect.DeepEqual(m.Settings, want) {
		t.Fatalf("the host reads\n%+v\nthe worker\n%+v", m.Settings, want)
	}
	// A flag given wins over its variable.
	m = NewMain()
	m.LookupEnv = lookup
	if err := m.ParseFlags(context.Background(), []string{"--public-reads=false", "--audience", "other"}); err != nil {
		t.Fatal(err)
	}
	if m.Settings.PublicReads || m.Settings.Audience != "other" {
		t.Fatalf("flags given did not win: %+v", m.Settings)
	}
}

// A host whose address is taken says so and names the flag that moves it.
func TestAddressInUseNamesTheFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	m := NewMain()
	m.LookupEnv = func(string) (string, bool) { return "", false }
	m.Stdout = io.Discard
	ctx := context.Background()
	if err := m.ParseFlags(ctx, []string{"--addr", ln.Addr().String(), "--data", t.TempDir(), "--no-examples", "--embed-provider", "off"}); err != nil {
		t.Fatal(err)
	}
	err = m.Run(ctx)
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "another process is listening on "+ln.Addr().String()) || !strings.Contains(err.Error(), "--addr") {
		t.Fatalf("Run on a taken address: %v", err)
	}
}
