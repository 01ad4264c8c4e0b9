package test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/internal/hostmain"
)

// startInProcess boots the local host in this process, as `rowcall serve`
// does (hostmain.Main with the same flags startHost gives the binary), on a
// fresh data directory with embedded SQLite, serving on a loopback port. Its
// environment is this process's plus env, read through Main.LookupEnv, so
// hosts in one test binary do not share it.
func startInProcess(t testing.TB, env []string) *target {
	t.Helper()
	vars := map[string]string{}
	for _, e := range append(os.Environ(), env...) {
		name, value, _ := strings.Cut(e, "=")
		vars[name] = value
	}
	vars["ROWCALL_OWNER_KEY"] = "" // the key is the data directory's, as startHost's
	data := t.TempDir()
	out := &syncBuffer{}
	m := hostmain.NewMain()
	m.LookupEnv = func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	m.Stdout = out
	args := append([]string{"--addr", "127.0.0.1:0", "--data", data, "--no-examples"}, allowLoopback...)
	ctx := context.Background()
	if err := m.ParseFlags(ctx, args); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing the in-process host: %v", err)
		}
	})
	if !strings.Contains(out.String(), "rowcall serving "+m.URL()+" ") {
		t.Fatalf("the in-process host said %q", out.String())
	}
	key, err := os.ReadFile(filepath.Join(data, "owner.key"))
	if err != nil {
		t.Fatal(err)
	}
	h := &host{URL: m.URL(), Key: strings.TrimSpace(string(key)), Data: data, out: &bytes.Buffer{}}
	return &target{host: h, Name: "inprocess", DB: h.db}
}
