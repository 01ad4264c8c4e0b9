package test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// `rowcall reindex` embeds every row of a host's database: on a directory
// written with embeddings off, it fills the vectors table (one vector per
// row, drawing its bar on stderr); run again it has nothing to do, and
// --force embeds every row again.
func TestReindex(t *testing.T) {
	if !haveWeights() {
		t.Skip("SKIPPED, NOT PASSED: no USE-lite weights (go run ./internal/embed/use/fetch)")
	}
	h := startHost(t, []string{"--no-examples=false"}, "ROWCALL_EMBED_PROVIDER=off")
	h.stop()
	count := func() (rows, vectors int) {
		db := h.db(t)
		defer db.Close()
		db.QueryRow(`SELECT COUNT(*) FROM directory`).Scan(&rows)
		db.QueryRow(`SELECT COUNT(*) FROM vectors`).Scan(&vectors)
		return
	}
	rows, vecs := count()
	if rows == 0 || vecs != 0 {
		t.Fatalf("before: %d rows, %d vectors", rows, vecs)
	}
	run := func(args ...string) string {
		cmd := exec.Command(binary, append([]string{"reindex", "--data", h.Data}, args...)...)
		cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("reindex %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run()
	if _, vecs = count(); vecs != rows || !strings.Contains(out, ": "+strconv.Itoa(rows)+" rows embedded") {
		t.Fatalf("after reindex: %d vectors for %d rows; its output:\n%s", vecs, rows, out)
	}
	if out = run(); !strings.Contains(out, ": 0 rows embedded") {
		t.Errorf("a second reindex embedded rows again:\n%s", out)
	}
	if out = run("--force"); !strings.Contains(out, ": "+strconv.Itoa(rows)+" rows embedded") {
		t.Errorf("reindex --force did not embed every row:\n%s", out)
	}
}
