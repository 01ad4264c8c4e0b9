package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/rowcall/rowcall/internal/redact"
)

// AskCommand is `rowcall ask WORDS…`: the rows that fit plain words (GET
// /api/dispatch?ask=), best first, each with what it does and the `rowcall
// call` that runs it as its example does. It exits 1 when nothing fits.
type AskCommand struct {
	client
	limit int
}

func (c *AskCommand) Usage() (string, string) {
	return "WORDS…", "find rows by what you want done, in plain words, and print how to call each"
}

func (c *AskCommand) Flags(fs *flag.FlagSet) {
	c.client.flags(fs)
	fs.IntVar(&c.limit, "limit", 5, "at most this many matches (1 to 50)")
}

func (c *AskCommand) Run(ctx context.Context, env *Env, args []string) error {
	words := strings.TrimSpace(strings.Join(args, " "))
	if words == "" {
		return usageError("ask", c)
	}
	c.connect(ctx, env)
	status, out, err := c.do("GET", "/api/dispatch?"+url.Values{"ask": {words}, "limit": {strconv.Itoa(c.limit)}}.Encode(), nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("HTTP %d\n%s", status, indented(out))
	}
	matches, _ := out["matches"].([]any)
	if len(matches) == 0 {
		fmt.Fprintf(env.Stderr, "no row fits %q\n", words)
		return exitCode(1)
	}
	for _, m := range matches {
		m, _ := m.(map[string]any)
		call, _ := m["call"].(map[string]any)
		body, _ := call["body"].(string)
		key, _ := m["key"].(string)
		what, _ := m["what"].(string)
		fmt.Fprintf(env.Stdout, "%s  %v  %s\n", redact.Line(key), m["score"], redact.Line(what))
		if body == "" {
			fmt.Fprintf(env.Stdout, "  rowcall call %s\n", redact.Line(key))
		} else {
			fmt.Fprintf(env.Stdout, "  rowcall call %s %s\n", redact.Line(key), shellQuote(body))
		}
	}
	return nil
}

// shellQuote is s as one shell word that a shell reads back as s: single
// quotes, or, when s holds a control character, bash's $'…' with the
// character escaped (so none reaches the terminal either).
func shellQuote(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteRune('\\')
			b.WriteRune(r)
		case unicode.IsControl(r):
			for _, c := range []byte(string(r)) {
				fmt.Fprintf(&b, "\\x%02x", c)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String() + "'"
}
