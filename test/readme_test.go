package test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// docAddress is the host address the docs print; the test's host listens
// elsewhere, so every block has it replaced by the host's URL.
const docAddress = "http://127.0.0.1:8787"

// shellBlock is one ```bash block of a page.
type shellBlock struct {
	line  int    // the line of its opening fence
	text  string // its commands
	norun string // why it does not run ("" when it runs)
}

// norunMarker marks a block that must not run, with the reason, on the line
// right before its fence: <!-- norun: needs the internet -->.
var norunMarker = regexp.MustCompile(`^<!--\s*norun:\s*(\S.*?)\s*-->$`)

// shellBlocks returns the ```bash (or sh, shell) blocks of a Markdown page, at
// any indentation.
func shellBlocks(t *testing.T, path string) []shellBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []shellBlock
	var cur *shellBlock
	var body []string
	prev := ""
	lines := bufio.NewScanner(f)
	for n := 1; lines.Scan(); n++ {
		line := lines.Text()
		trim := strings.TrimSpace(line)
		switch {
		case cur != nil && trim == "```":
			cur.text = strings.Join(body, "\n")
			blocks = append(blocks, *cur)
			cur, body = nil, nil
		case cur != nil:
			body = append(body, line)
		case trim == "```bash" || trim == "```sh" || trim == "```shell":
			cur = &shellBlock{line: n}
			if m := norunMarker.FindStringSubmatch(prev); m != nil {
				cur.norun = m[1]
			}
		}
		if trim != "" {
			prev = trim
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a shell block is never closed", path, cur.line)
	}
	return blocks
}

// expectedOutput is what a block's comments say its commands print: the
// JSON fields of every comment line that starts with "{", each as it would
// appear in compact JSON. A string value with "…" in it stands for any value,
// so only its name is expected.
func expectedOutput(block string) []string {
	field := regexp.MustCompile(`"(\w+)":("(?:[^"\\]|\\.)*"|true|false|-?\d+(?:\.\d+)?)?`)
	var want []string
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "#")
		if !ok || !strings.HasPrefix(strings.TrimSpace(rest), "{") {
			continue
		}
		for _, m := range field.FindAllStringSubmatch(rest, -1) {
			if m[2] == "" || strings.ContainsAny(m[2], `…\`) {
				want = append(want, `"`+m[1]+`":`)
			} else {
				want = append(want, `"`+m[1]+`":`+m[2])
			}
		}
	}
	return want
}

// TestReadme runs every shell block of README.md and docs/*.md that is not
// marked norun, as printed, against a fresh host with its example rows: each
// page's blocks in order in one bash (so a page may set a variable and use
// it later), from a directory that looks like a fresh clone with the host's
// data in ./data, with `rowcall` on PATH and `go run ./host` meaning it. Each
// block must exit 0 and print the JSON fields its comments show.
func TestReadme(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"../README.md"}, pages...)

	h := startHost(t, []string{"--no-examples=false"})
	work := t.TempDir()
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "data" || e.Name() == "rowcall" {
			continue
		}
		abs, _ := filepath.Abs(filepath.Join("..", e.Name()))
		if err := os.Symlink(abs, filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	clone := map[string]bool{} // the names in the clone's root
	for _, e := range entries {
		clone[e.Name()] = true
	}
	clone["data"], clone["rowcall"] = true, true
	bin := t.TempDir()
	for _, link := range []string{filepath.Join(work, "data"), filepath.Join(work, "rowcall"), filepath.Join(bin, "rowcall")} {
		target := binary
		if filepath.Base(link) == "data" {
			target = h.Data
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}

	for _, page := range pages {
		name, _ := filepath.Rel("..", page)
		blocks := shellBlocks(t, page)
		var run []shellBlock
		for _, b := range blocks {
			if b.norun != "" {
				t.Logf("%s:%d: not run: %s", name, b.line, b.norun)
				continue
			}
			run = append(run, b)
		}
		if len(run) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			var script strings.Builder
			script.WriteString("set -euo pipefail\n")
			script.WriteString(`go() { if [ "${1-}" = run ] && [ "${2-}" = ./host ]; then shift 2; command rowcall "$@"; else command go "$@"; fi; }` + "\n")
			for i, b := range run {
				text := strings.ReplaceAll(b.text, docAddress, h.URL)
				fmt.Fprintf(&script, "echo %d > %q\n{\n%s\n} > %q 2> %q\n", i, filepath.Join(out, "current"),
					text, filepath.Join(out, fmt.Sprint(i, ".out")), filepath.Join(out, fmt.Sprint(i, ".err")))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bash, "-c", script.String())
			cmd.Dir = work
			var shell strings.Builder // bash's own complaints, such as a syntax error
			cmd.Stderr = &shell
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"ROWCALL_URL="+h.URL, "ROWCALL_OWNER_KEY="+h.Key)
			err := cmd.Run()
			read := func(i int, ext string) string {
				b, _ := os.ReadFile(filepath.Join(out, fmt.Sprint(i, ext)))
				return string(b)
			}
			if err != nil {
				cur, _ := os.ReadFile(filepath.Join(out, "current"))
				var i int
				fmt.Sscan(string(cur), &i)
				t.Fatalf("%s:%d: the block failed (%v)\n%s\nstdout:\n%s\nstderr:\n%s%s", name, run[i].line, err, run[i].text, read(i, ".out"), read(i, ".err"), shell.String())
			}
			// A fresh clone stays clean: what a block writes goes to a
			// temporary directory, not into the repository.
			now, _ := os.ReadDir(work)
			for _, e := range now {
				if !clone[e.Name()] {
					t.Errorf("%s: a block wrote %s into the repository's root; write to a mktemp directory", name, e.Name())
					os.RemoveAll(filepath.Join(work, e.Name()))
				}
			}
			for i, b := range run {
				got := read(i, ".out")
				for _, want := range expectedOutput(b.text) {
					if !strings.Contains(got, want) {
						t.Errorf("%s:%d: the output has no %s\n%s\nstdout:\n%s\nstderr:\n%s", name, b.line, want, b.text, got, read(i, ".err"))
					}
				}
			}
		})
	}
}
