package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/envflag"
)

func run(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs,
		LookupEnv: func(name string) (string, bool) { v, ok := vars[name]; return v, ok }}
	code = Main(context.Background(), args, env)
	return code, out.String(), errs.String()
}

// `rowcall --help` lists every command, every flag of each and its variable;
// `rowcall COMMAND --help` lists the command's flags with their variables and
// help.
func TestHelpListsEveryCommandAndFlag(t *testing.T) {
	code, help, _ := run(t, nil, "--help")
	if code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	for _, c := range commands {
		cmd := c.new()
		if !strings.Contains(help, "rowcall "+c.name+" [flags]") {
			t.Errorf("rowcall --help does not list %q:\n%s", c.name, help)
		}
		code, own, _ := run(t, nil, append(strings.Fields(c.name), "--help")...)
		if code != 0 || !strings.HasPrefix(own, "usage: "+usageLine(c.name, cmd)+"\n") {
			t.Errorf("rowcall %s --help exited %d:\n%s", c.name, code, own)
		}
		flagSet(c.name, cmd).VisitAll(func(f *flag.Flag) {
			v := "$" + envflag.Var(f)
			if !strings.Contains(help, "--"+f.Name) || !strings.Contains(help, v) {
				t.Errorf("rowcall --help lacks %s --%s (%s)", c.name, f.Name, v)
			}
			if !strings.Contains(own, "--"+f.Name) || !strings.Contains(own, v) || !strings.Contains(own, f.Usage) {
				t.Errorf("rowcall %s --help lacks --%s, %s or its help", c.name, f.Name, v)
			}
		})
	}
	if code, _, errs := run(t, nil, "no-such-command"); code != 2 || !strings.Contains(errs, `unknown command "no-such-command"`) {
		t.Errorf("an unknown command exited %d: %s", code, errs)
	}
}

// samples are values tried on each flag, in order, to find one its Value
// takes that differs from its default.
var samples = []string{"1", "7", "7s", "sample-value", "test=http://127.0.0.1:9/v1"}

// Every flag of every command can be set by its variable, as Main parses the
// command line; a flag given on the command line wins over it. The table is
// the commands table itself, so a new flag is checked as soon as it exists.
func TestEveryFlagIsSetByItsVariable(t *testing.T) {
	// Flags whose value the command checks further get a value that passes.
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"m":{"input":1,"output":2}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	special := map[string]string{"prices": prices}
	seen := map[string]string{}
	for _, c := range commands {
		flagSet(c.name, c.new()).VisitAll(func(f *flag.Flag) {
			name := envflag.Var(f)
			if !strings.HasPrefix(name, envflag.Prefix) {
				t.Errorf("rowcall %s --%s: variable %s is not a ROWCALL_ one", c.name, f.Name, name)
			}
			if other, ok := seen[name]; ok && other != f.Name {
				t.Errorf("%s is the variable of --%s and --%s", name, other, f.Name)
			}
			seen[name] = f.Name
			// The value the flag takes from the sample, set directly.
			var sample, want string
			for _, s := range append([]string{special[f.Name]}, samples...) {
				direct := flagSet(c.name, c.new()).Lookup(f.Name)
				if s != "" && direct.Value.Set(s) == nil && direct.Value.String() != f.DefValue {
					sample, want = s, direct.Value.String()
					break
				}
			}
			if sample == "" {
				t.Errorf("rowcall %s --%s: no sample value to set it with; add one to samples", c.name, f.Name)
				return
			}
			fs, _, err := parse(context.Background(), c.name, c.new(), nil, &Env{LookupEnv: func(n string) (string, bool) { return sample, n == name }})
			if err != nil {
				t.Errorf("rowcall %s with %s=%s: %v", c.name, name, sample, err)
				return
			}
			if got := fs.Lookup(f.Name).Value.String(); got != want {
				t.Errorf("rowcall %s with %s=%s: --%s is %q, want %q", c.name, name, sample, f.Name, got, want)
			}
			fs, _, err = parse(context.Background(), c.name, c.new(), []string{"--" + f.Name + "=" + f.DefValue}, &Env{LookupEnv: func(n string) (string, bool) { return sample, n == name }})
			if f.DefValue != "" && f.DefValue != "[]" {
				if err != nil || fs.Lookup(f.Name).Value.String() != f.DefValue {
					t.Errorf("rowcall %s --%s=%s with %s=%s: the flag given did not win (%v)", c.name, f.Name, f.DefValue, name, sample, err)
				}
			}
		})
	}
}

// A variable that is not a value of its flag is refused, naming it.
func TestBadVariableIsNamed(t *testing.T) {
	code, _, errs := run(t, map[string]string{"ROWCALL_WINDOW": "a day"}, "key", "rotate", "--data", t.TempDir())
	if code != 2 || !strings.Contains(errs, "$ROWCALL_WINDOW=a day") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// The bash script completes commands, sub-commands, words and each command's
// flags, in a real bash.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("SKIPPED, NOT PASSED: no bash here")
	}
	code, script, _ := run(t, nil, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash exited %d", code)
	}
	for line, want := range map[string]string{
		"rowcall rece":                "receipt",
		"rowcall rei":                 "reindex",
		"rowcall import o":            "openapi",
		"rowcall receipt v":           "verify",
		"rowcall receipt verify --k":  "--keys",
		"rowcall import --d":          "--data --dry-run",
		"rowcall serve --public-r":    "--public-reads",
		"rowcall migrate l":           "list",
		"rowcall key r":               "rotate",
		"rowcall completion b":        "bash",
		"rowcall call --s":            "--shape",
		"rowcall receipt export --u":  "--url",
		"rowcall serve --no-such-one": "",
	} {
		words := strings.Fields(line)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, bash, "--norc", "-c", script+`
COMP_WORDS=(`+line+`); COMP_CWORD=`+strconv.Itoa(len(words)-1)+`; _rowcall; echo "${COMPREPLY[*]}"`)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%q completes to %q (%v), want %q", line, out, err, want)
		}
	}
}

// `rowcall call` prints a refusal's JSON as a person reads it: the host's
// "ask=<plain words>" stays so, not "ask=\u003cplain words\u003e".
func TestCallPrintsARefusalReadably(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"unknown_key","how_to_fix":"use a did_you_mean entry, or GET /api/dispatch?ask=<plain words>"}`)
	}))
	defer srv.Close()
	code, _, errs := run(t, map[string]string{"ROWCALL_OWNER_KEY": "k"}, "call", "NOPE", "--url", srv.URL)
	if code != 1 || !strings.Contains(errs, `"how_to_fix": "use a did_you_mean entry, or GET /api/dispatch?ask=<plain words>"`) {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
}

// `rowcall receipt verify FILE` without --keys says where the keys come from.
func TestReceiptVerifyWithoutKeysSaysWhereTheyAre(t *testing.T) {
	code, _, errs := run(t, nil, "receipt", "verify", "chain.json")
	if code == 0 || !strings.Contains(errs, "rowcall receipt keys > keys.json") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
}
