package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NPM returns dir made absolute, with its pinned npm dependencies installed
// from its package-lock.json (npm ci --ignore-scripts) when the file probe,
// relative to dir, is missing. make test installs them first.
func NPM(t testing.TB, dir, probe string) string {
	t.Helper()
	dir, _ = filepath.Abs(dir)
	if _, err := os.Stat(filepath.Join(dir, probe)); err != nil {
		install := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	return dir
}
