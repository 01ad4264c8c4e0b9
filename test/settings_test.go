package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
