package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The host reads the ROWCALL_* settings the worker reads as vars, as the
// defaults of its flags: ROWCALL_PUBLIC_READS=1 opens reads as
// --public-reads does, and a flag on the command line still wins.
func TestHostReadsWorkerSettings(t *testing.T) {
	for _, c := range []struct {
		flags  []string
		env    []string
		status int
	}{
		{nil, nil, 401},
		{nil, []string{"ROWCALL_PUBLIC_READS=1"}, 200},
		{nil, []string{"ROWCALL_PUBLIC_READS=yes"}, 200},
		{[]string{"--public-reads=false"}, []string{"ROWCALL_PUBLIC_READS=1"}, 401},
	} {
		h := startHost(t, c.flags, c.env...)
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory", NoAuth: true}), c.status, nil)
	}
}

// `rowcall call` reads the names README exports (ROWCALL_URL,
// ROWCALL_OWNER_KEY), and a 401 says where the key it sent came from.
func TestCLIReadsREADMENames(t *testing.T) {
	h := startHost(t, []string{"--no-examples=false"})
	run := func(env ...string) (string, error) {
		cmd := exec.Command(binary, "call", "ECHO", "hello")
		cmd.Dir = t.TempDir() // no ./data here
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("ROWCALL_URL="+h.URL, "ROWCALL_OWNER_KEY="+h.Key)
	if err != nil || !strings.Contains(out, "hello") {
		t.Fatalf("call with README's names: %v\n%s", err, out)
	}
	out, err = run("ROWCALL_URL="+h.URL, "ROWCALL_OWNER_KEY=rk_wrong")
	if err == nil || !strings.Contains(out, "HTTP 401") || !strings.Contains(out, "came from $ROWCALL_OWNER_KEY") {
		t.Fatalf("call with a wrong key: %v\n%s", err, out)
	}
	out, err = run("ROWCALL_URL="+h.URL, "ROWCALL_OWNER_KEY=")
	if err == nil || !strings.Contains(out, "HTTP 401") || !strings.Contains(out, filepath.Join("data", "owner.key")) || !strings.Contains(out, "is unset") {
		t.Fatalf("call with no key: %v\n%s", err, out)
	}
}

// The sign-in settings reach the host as variables and as serve's flags:
// a malformed ROWCALL_OIDC_ROLES, or an issuer without a client id, stops
// the host at start with the setting to fix; without an issuer nobody signs
// in (no /api/signin); with the flags, people sign in through the provider
// they name, by the name given, with the roles mapped.
func TestHostReadsSignInSettings(t *testing.T) {
	p := startIDP(t)
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"ROWCALL_OIDC_ISSUER=" + p.Issuer, "ROWCALL_OIDC_CLIENT_ID=rowcall-login", "ROWCALL_OIDC_ROLES=tools-admins=wizard"},
			"ROWCALL_OIDC_ROLES: tools-admins=wizard is not group=role"},
		{[]string{"ROWCALL_OIDC_ISSUER=" + p.Issuer}, "ROWCALL_OIDC_CLIENT_ID is not set"},
		{[]string{"ROWCALL_OIDC_ISSUER=login.example.com", "ROWCALL_OIDC_CLIENT_ID=x"}, "ROWCALL_OIDC_ISSUER: login.example.com is not an http(s) URL"},
	} {
		cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--no-examples")
		cmd.Env = append(append(os.Environ(), "ROWCALL_OWNER_KEY=", "ROWCALL_EMBED_PROVIDER=off"), c.env...)
		done := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
		out, err := cmd.CombinedOutput()
		done.Stop()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("serve with %v: %v, want it stopped saying %q:\n%s", c.env, err, c.want, out)
		}
	}
	h := startHost(t, nil)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/signin", NoAuth: true}), 404, nil)
	h = startHost(t, []string{"--oidc-issuer", p.Issuer, "--oidc-client-id", "rowcall-login", "--oidc-name", "Acme SSO",
		"--oidc-roles", "tools-editors=editor", "--oidc-scopes", "groups", "--oidc-groups-claim", "groups"},
		"ROWCALL_OIDC_CLIENT_SECRET="+loginSecret, "ROWCALL_OIDC_ROLES=tools-editors=viewer")
	expect(t, h.do(t, req{Method: "GET", Path: "/api/signin", NoAuth: true}), 200, map[string]any{"provider": "Acme SSO", "login_url": h.URL + "/login"})
	got := asPerson(h, signIn(t, h.URL, "bob")).do(t, req{Method: "GET", Path: "/api/me"})
	if person, _ := got.JSON["person"].(map[string]any); person["role"] != "editor" {
		t.Fatalf("bob with --oidc-roles tools-editors=editor (the flag over the variable): %s", got.Raw)
	}
}
