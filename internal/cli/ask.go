package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
		fmt.Fprintf(env.Stdout, "%v  %v  %v\n", m["key"], m["score"], m["what"])
		if body == "" {
			fmt.Fprintf(env.Stdout, "  rowcall call %v\n", m["key"])
		} else {
			fmt.Fprintf(env.Stdout, "  rowcall call %v %s\n", m["key"], shellQuote(body))
		}
	}
	return nil
}

// shellQuote is s as one single-quoted POSIX shell word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
