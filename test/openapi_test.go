package test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
)

// `rowcall import openapi` with GitHub's REST description (313 operations,
// internal/openapi/testdata): a dry run, the import, and a second import that
// changes nothing; an imported operation is then callable with typed
// arguments (POST /api/dispatch/{key}) and reaches the loopback upstream at
// its method and path.
func TestImportOpenAPICommand(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(b)})
	}))
	defer up.Close()
	h := startHost(t, []string{"--allow-outbound", "127.0.0.1/32"})
	run := func(args ...string) string {
		t.Helper()
		cmd := append([]string{"import", "openapi", "../internal/openapi/testdata/github-rest.json", "--prefix", "GH_", "--server", up.URL}, args...)
		out, err := exec.Command(binary, append(cmd, "--url", h.URL, "--data", h.Data)...).CombinedOutput()
		if err != nil {
			t.Fatalf("rowcall %s: %v\n%s", strings.Join(cmd, " "), err, out)
		}
		return string(out)
	}
	if out := run("--dry-run"); !strings.Contains(out, "would create 313, would update 0, unchanged 0") {
		t.Fatalf("dry run: %s", out)
	}
	if out := run(); !strings.Contains(out, "created 313, updated 0, unchanged 0") {
		t.Fatalf("import: %s", out)
	}
	if out := run(); !strings.Contains(out, "created 0, updated 0, unchanged 313") {
		t.Fatalf("second import: %s", out)
	}
	got := h.do(t, req{Method: "POST", Path: "/api/dispatch/GH_ISSUES_CREATE_COMMENT", Body: map[string]any{"owner": "octo", "repo": "hello", "issue_number": 7, "body": "hi"}})
	expect(t, got, 200, map[string]any{"ok": true})
	var echoed map[string]string
	json.Unmarshal([]byte(strings.TrimPrefix(got.JSON["result"].(string), "HTTP 200:")), &echoed)
	if echoed["method"] != "POST" || echoed["path"] != "/repos/octo/hello/issues/7/comments" || echoed["body"] != `{"body":"hi"}` {
		t.Fatalf("the upstream saw %v", echoed)
	}
	// A call whose arguments do not fit the schema is refused before it runs.
	expect(t, h.do(t, req{Method: "POST", Path: "/api/dispatch/GH_ISSUES_CREATE_COMMENT", Body: map[string]any{"owner": "octo", "repo": "hello", "issue_number": "seven", "body": "hi"}}), 400, map[string]any{"error": "invalid_arguments"})
}
