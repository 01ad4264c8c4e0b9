package hostmain

import (
	"context"
	"reflect"
	"testing"

	"github.com/rowcall/rowcall/internal/app"
)

// Every setting app.ReadSettings reads (the worker's vars, by the same names)
// means the same on the local host: the host's settings from an environment
// that sets them all are what ReadSettings gives for it, whether a setting
// reaches the host through its flag's variable or directly.
func TestSettingsMeanWhatTheWorkerReads(t *testing.T) {
	samples := map[string]string{
		"ROWCALL_AUDIENCE":        "aud-test",
		"ROWCALL_PUBLIC_READS":    "yes",
		"ROWCALL_PUBLIC_URL":      "https://rowcall.example.test",
		"ROWCALL_TRUST_FORWARDED": "on",
		"ROWCALL_ALLOW_OUTBOUND":  "127.0.0.1/32, 10.0.0.0/8",
		"ROWCALL_SECRETS_PREFIX":  "ROWS_",
		"ROWCALL_NO_EXAMPLES":     "1",
		"ROWCALL_MODEL_PROVIDERS": "a=http://127.0.0.1:9/v1 b=http://127.0.0.1:9/v2,no-tools",
		"ROWCALL_MODEL_DEFAULT":   "b",
		"ROWCALL_MODEL_PRICES":    `{"m":{"input":1,"output":2}}`,
		"ROWCALL_EMBED_PROVIDER":  "b",
		"ROWCALL_EMBED_MODEL":     "nomic-embed-text",
		"ROWCALL_EMBED_AUTH":      "bearer:ROWS_EMBED_KEY",
		"ROWCALL_EMBED_DIM":       "768",
		"ROWCALL_ASK_RERANK":      "ASK_RERANK",
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
