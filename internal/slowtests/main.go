// Command slowtests runs `go test -json` with the arguments it is given,
// prints the tests' output as `go test` would, and, at the end, the ten
// slowest top-level tests with their packages: what `make test` shows so
// the suite's time stays visible (docs/operating.md, "The test suite").
// It exits with go test's status.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type timed struct {
	name    string
	seconds float64
}

func main() {
	cmd := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowtests:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "slowtests:", err)
		os.Exit(2)
	}
	slow := read(out)
	status := 0
	if err := cmd.Wait(); err != nil {
		status = 1
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			status = ee.ExitCode()
		}
	}
	slices.SortFunc(slow, func(a, b timed) int { return cmp.Compare(b.seconds, a.seconds) })
	fmt.Println("\nthe ten slowest tests:")
	for _, t := range slow[:min(10, len(slow))] {
		fmt.Printf("%8.1fs  %s\n", t.seconds, t.name)
	}
	os.Exit(status)
}

// read prints what `go test` without -v prints — each package's result,
// and the whole output of every top-level test that failed (or of every
// unfinished one, when its package failed: a panic or a timeout) — and
// returns the elapsed time of every top-level test that passed or failed.
func read(r io.Reader) []timed {
	var slow []timed
	held := map[string]*strings.Builder{} // package and top-level test → its output so far
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Println(sc.Text()) // not an event: a build error's text
			continue
		}
		top, _, _ := strings.Cut(e.Test, "/")
		key := e.Package + " " + top
		switch {
		case e.Action == "output" && e.Test == "":
			if !strings.HasPrefix(e.Output, "=== ") && e.Output != "PASS\n" {
				fmt.Print(e.Output)
			}
		case e.Action == "output":
			if held[key] == nil {
				held[key] = &strings.Builder{}
			}
			held[key].WriteString(e.Output)
		case (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") && e.Test == top && top != "":
			if e.Action == "fail" && held[key] != nil {
				fmt.Print(held[key].String())
			}
			delete(held, key)
			if e.Action != "skip" {
				slow = append(slow, timed{key, e.Elapsed})
			}
		case e.Action == "fail" && e.Test == "":
			for k, b := range held {
				if strings.HasPrefix(k, e.Package+" ") {
					fmt.Print(b.String())
					delete(held, k)
				}
			}
		}
	}
	return slow
}
