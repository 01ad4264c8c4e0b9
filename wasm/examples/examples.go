// Package examples holds rowcall's example fn modules, one directory of source
// per module, and embeds the built bytes of the small ones so a host can
// register them without any toolchain:
//
//	now            C (clang + wasi-libc)      the seed's NOW: Pacific time as JSON
//	upper          AssemblyScript (+ wasi-shim) its arguments in upper case
//	echo           WAT (wabt's wat2wasm)      its arguments joined by spaces
//	last_reply_of  Go (GOOS=wasip1)           the seed's LAST_REPLY_OF
//
// The Go module is about 2.6 MB and is not committed: BuildGo builds it with the
// Go toolchain (always present where rowcall is built). Hostile returns the
// modules the sandbox tests use against itself (hostile/*.wat). All of them
// follow wasm/ABI.md; build/modules.sh rebuilds every one from source, and a
// test checks that the committed bytes are what the sources build to.
package examples

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed now.wasm upper.wasm echo.wasm hostile/*.wasm last_reply_of/main.go hostile/probe/main.go
var files embed.FS

// Example is one example module and the row that suggests how to call it.
type Example struct {
	Name    string // module name (the row's target)
	Lang    string // "c", "assemblyscript", "wat" or "go"
	Source  string // source file, relative to wasm/examples
	Key     string // suggested row key
	Content string // suggested row content: docstring, then the argument template
	Wasm    []byte // the committed build; nil for Go (see BuildGo)
}

var all = []Example{
	{Name: "now", Lang: "c", Source: "now/now.c", Key: "NOW", Content: `# Return the current time from the build clock in Pacific time (America/Los_Angeles).
# WHEN_TO_USE: any object or model that needs the current date or time.
# ARGS: none
# EX: [NOW][/NOW]
# OUTPUT: { now, today, time, zone, iso } — Pacific-offset ISO; today is the Pacific calendar date.`},
	{Name: "last_reply_of", Lang: "go", Source: "last_reply_of/main.go", Key: "LAST_REPLY_OF", Content: `# WHAT: The text of the last [REPLY]…[/REPLY] block in a model's output.
# WHEN_TO_USE: a flow must pass on only the reply part of an agent's answer.
# ARGS: $1+=the text (it may contain '|')
# EX: [LAST_REPLY_OF]thinking… [REPLY]Hi there![/REPLY][/LAST_REPLY_OF]
# OUTPUT: the reply text, trimmed; ERR:fn:exit:1:… when there is no [REPLY] block.
["$1+"]`},
	{Name: "upper", Lang: "assemblyscript", Source: "upper/upper.ts", Key: "UPPER", Content: `# WHAT: Its argument in upper case (Unicode-aware).
# WHEN_TO_USE: a value must be shouted, or compared without case.
# ARGS: $1+=the text
# EX: [UPPER]hello wörld[/UPPER]
# OUTPUT: HELLO WÖRLD
["$1+"]`},
	{Name: "echo", Lang: "wat", Source: "echo/echo.wat", Key: "ECHO", Content: `# WHAT: Its text, returned unchanged (pipes included).
# WHEN_TO_USE: testing a flow or the fn sandbox.
# ARGS: $1+=the text
# EX: [ECHO]hello[/ECHO]
# OUTPUT: hello
["$1+"]`},
}

// All returns every example module, with Wasm set for the committed ones.
func All() []Example {
	out := make([]Example, len(all))
	for i, e := range all {
		if b, err := files.ReadFile(e.Name + ".wasm"); err == nil {
			e.Wasm = b
		}
		out[i] = e
	}
	return out
}

// ByName returns the example module called name.
func ByName(name string) (Example, bool) {
	for _, e := range All() {
		if e.Name == name {
			return e, true
		}
	}
	return Example{}, false
}

// Builtin returns the examples whose bytes are committed: the ones a host can
// register with no toolchain.
func Builtin() []Example {
	var out []Example
	for _, e := range All() {
		if e.Wasm != nil {
			out = append(out, e)
		}
	}
	return out
}

// Hostile returns the modules that attack the sandbox, by name: loop, sleep,
// grow, flood, trap, exit and recurse run and fail; spill and peek, regrow and
// tablegrow run and must see nothing of other calls nor grow past the limits;
// forbidden, reactor, notwasm, badsig, bigmem, bigtable and startloop are
// refused at registration. Each source's header
// (hostile/<name>.wat) says what it must produce. The Go probe
// (hostile/probe), which reports what the sandbox lets it reach, is built by
// BuildGo.
func Hostile() map[string][]byte {
	entries, _ := files.ReadDir("hostile")
	out := map[string][]byte{}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".wasm"); ok {
			out[name], _ = files.ReadFile("hostile/" + e.Name())
		}
	}
	return out
}

// ErrNoGo is BuildGo's error when no go command is on PATH.
var ErrNoGo = errors.New("examples: the go command is not on PATH")

// BuildGo builds a Go example from its embedded source with GOOS=wasip1
// GOARCH=wasm in a temporary module and returns the bytes. path is the
// example's directory under wasm/examples: "last_reply_of", or "hostile/probe"
// (the sandbox tests' probe). It needs only the Go toolchain, and no network.
func BuildGo(ctx context.Context, path string) ([]byte, error) {
	src, err := files.ReadFile(path + "/main.go")
	if err != nil {
		return nil, fmt.Errorf("examples: no Go example at %q", path)
	}
	name := filepath.Base(path)
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil, ErrNoGo
	}
	dir, err := os.MkdirTemp("", "rowcall-example-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+name+"\n\ngo 1.21\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, name+".wasm")
	cmd := exec.CommandContext(ctx, gobin, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("examples: go build %s: %v: %s", name, err, msg)
	}
	return os.ReadFile(out)
}
