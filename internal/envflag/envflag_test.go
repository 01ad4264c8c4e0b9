package envflag

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	env := map[string]string{"ROWCALL_KEYS": "from-env", "ROWCALL_DRY_RUN": "yes", "ROWCALL_BATCH": "", "ROWCALL_PUBLIC_URL": "https://x.test"}
	lookup := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	for _, c := range []struct {
		args, pos []string
		keys      string
		dry       bool
		batch     int
	}{
		// Flags between and after the positional arguments; "-" is one.
		{[]string{"FILE", "--keys", "k.json", "-"}, []string{"FILE", "-"}, "k.json", true, 500},
		{[]string{"--keys=k.json", "FILE", "-dry-run=false", "--batch", "9"}, []string{"FILE"}, "k.json", false, 9},
		// After "--" every argument is positional; an empty variable is unset.
		{[]string{"A", "--", "--keys", "-x"}, []string{"A", "--keys", "-x"}, "from-env", true, 500},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		keys := fs.String("keys", "", "")
		dry := fs.Bool("dry-run", false, "")
		batch := fs.Int("batch", 500, "")
		pos, err := Parse(fs, c.args, lookup)
		if err != nil || !slices.Equal(pos, c.pos) || *keys != c.keys || *dry != c.dry || *batch != c.batch {
			t.Errorf("%q: %q keys=%q dry=%v batch=%d (%v)", c.args, pos, *keys, *dry, *batch, err)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Int("batch", 500, "")
	env["ROWCALL_BATCH"] = "many"
	if _, err := Parse(fs, nil, lookup); err == nil || !strings.Contains(err.Error(), "$ROWCALL_BATCH=many") {
		t.Errorf("a bad variable: %v", err)
	}
	if v := Var(&flag.Flag{Name: "public-url", Value: new(stringValue)}); v != "ROWCALL_PUBLIC_URL" {
		t.Errorf("Var(public-url) = %s", v)
	}
}

type stringValue string

func (s *stringValue) String() string     { return string(*s) }
func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
