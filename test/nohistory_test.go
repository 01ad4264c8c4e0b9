package test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// historyCitations are the ways a text cites the history of its own making,
// which a reader cannot open: a numbered work session or issue, a work
// branch, who measured or merged what. A doc or comment cites a RATIONALE
// section, a test, a benchmark name or a commit instead, or states the fact.
// Each pattern leaves the product's own words alone: an MCP or D1 session
// ("the session's bookmark"), a flow's branch ("(each branch counts)"), an
// agent's round ("(round 1)"), the shim's helpers, t.Helper.
var historyCitations = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bsessions? \d+`),                               // a numbered work session
	regexp.MustCompile(`(?i)\bissues? \d+`),                                 // "issue 17's bar"
	regexp.MustCompile(`(?i)(\(|, )branch [a-z][a-z0-9]*\d[a-z0-9]*\b`),     // a process branch whose name has a digit
	regexp.MustCompile(`(?i)(\(|, )branch (ask|edge|mcp|host|gate|vec)\w*`), // a process branch named after an area
	regexp.MustCompile(`(?i)\b(another|this|a helper|the lead's) session\b`),
	regexp.MustCompile(`(?i)\bhelper (session|engineer)s?\b`),
	regexp.MustCompile(`(?i)\b(other|another) engineers?\b`),
	regexp.MustCompile(`(?i)\bmeasured by (the )?(lead|helper|another|an engineer)\b`),
	regexp.MustCompile(`(?i)\(lead\b|\bthe lead\b`),
	regexp.MustCompile(`(?i)\bquiet re-?measurement\b`),
	regexp.MustCompile(`(?i)\bafter every branch was merged\b`),
	regexp.MustCompile(`(?i)\brounds? of work\b`),
	regexp.MustCompile(`(?i)\bnewcomer \(`),
	regexp.MustCompile(`(?i)\b(on )?the shared machine\b|\bshared with other work\b`),
}

// anyCitation is historyCitations as one expression, to read each file once.
var anyCitation = func() *regexp.Regexp {
	var alt []string
	for _, re := range historyCitations {
		alt = append(alt, "(?:"+re.String()+")")
	}
	return regexp.MustCompile(strings.Join(alt, "|"))
}()

// mayCite reports whether line holds a word every citation has, so that
// only those lines meet the (slower) expressions.
func mayCite(line string) bool {
	lower := strings.ToLower(line)
	for _, w := range []string{"session", "issue", "branch", "engineer", "lead", "measure", "work", "newcomer", "shared"} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// historyFiles are the kinds of file a reader reads: docs, code and scripts.
var historyFiles = map[string]bool{".go": true, ".md": true, ".js": true, ".mjs": true, ".css": true,
	".html": true, ".sh": true, ".toml": true, ".sql": true, ".yaml": true, ".yml": true}

// TestNoHistory: no doc, comment or script of the repository cites the
// history of its own making.
func TestNoHistory(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs("nohistory_test.go")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", ".wrangler", "data", "out":
				return filepath.SkipDir
			}
			return nil
		}
		if path == self || !historyFiles[filepath.Ext(path)] && d.Name() != "Makefile" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		rel, _ := filepath.Rel(root, path)
		for n, line := range strings.Split(string(b), "\n") {
			if !mayCite(line) {
				continue
			}
			if m := anyCitation.FindString(line); m != "" {
				t.Errorf("%s:%d cites the history of its making (%q): cite a RATIONALE section, a test, a benchmark or a commit, or state the fact\n\t%s",
					rel, n+1, m, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files under %s", checked, root)
	}
}
