package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/rowcall/rowcall"
)

// client is the flags and credential shared by the commands that talk to a
// running host: --url, and --data for the owner key when $ROWCALL_OWNER_KEY
// is unset.
type client struct {
	ctx        context.Context // a request ends with it (Ctrl-C)
	base, data string
	key        string
	keyFrom    string // where key came from, for a 401's message
	operator   bool   // the key is the operator's ($ROWCALL_OPERATOR_KEY, DATA/operator.key), sent as a bearer token
}

func (c *client) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.base, "url", "http://127.0.0.1:8787", "the host's base URL")
	fs.StringVar(&c.data, "data", "./data", "data directory holding owner.key (when $"+rowcall.OwnerEnv+" is unset)")
}

// connect reads the owner key, once the flags are parsed.
func (c *client) connect(ctx context.Context, env *Env) {
	c.ctx = ctx
	c.base = strings.TrimRight(c.base, "/")
	what, variable, name := "owner", rowcall.OwnerEnv, "owner.key"
	if c.operator {
		what, variable, name = "operator", operatorEnv, "operator.key"
	}
	c.key = strings.TrimSpace(env.Getenv(variable))
	c.keyFrom = "the " + what + " key sent came from $" + variable
	if c.key == "" {
		file := filepath.Join(c.data, name)
		b, err := os.ReadFile(file)
		c.key = strings.TrimSpace(string(b))
		c.keyFrom = "the " + what + " key sent came from " + file + " ($" + variable + " is unset)"
		if c.key == "" {
			c.keyFrom = fmt.Sprintf("no %s key was sent: $%s is unset and %s holds none (%v)", what, variable, file, err)
		}
	}
}

// operatorEnv holds the operator key of a host serving tenants.
const operatorEnv = "ROWCALL_OPERATOR_KEY"

// raw sends one request with the owner key.
func (c *client) raw(method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(c.ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	switch {
	case c.key != "" && c.operator:
		req.Header.Set("Authorization", "Bearer "+c.key)
	case c.key != "":
		req.Header.Set("x-terminal-key", c.key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w (is `rowcall serve` running at %s?)", err, c.base)
	}
	if res.StatusCode == http.StatusUnauthorized {
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		what, variable := "owner", rowcall.OwnerEnv
		if c.operator {
			what, variable = "operator", operatorEnv
		}
		return nil, fmt.Errorf("HTTP 401 %s from %s: %s; set $%s to this host's %s key, or pass --data with its data directory",
			bytes.TrimSpace(raw), c.base, c.keyFrom, variable, what)
	}
	return res, nil
}

// text sends one GET and returns the answer's body as it is.
func (c *client) text(path string) (int, string, error) {
	res, err := c.raw("GET", path, nil)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

// do sends one request and decodes the JSON answer.
func (c *client) do(method, path string, body any) (int, map[string]any, error) {
	res, err := c.raw(method, path, body)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		return res.StatusCode, nil, fmt.Errorf("HTTP %d: %s", res.StatusCode, raw)
	}
	return res.StatusCode, out, nil
}

// usageError is the error of a command given the wrong arguments.
func usageError(name string, cmd Command) error {
	return fmt.Errorf("usage: %s", usageLine(name, cmd))
}

// openInput opens file, or standard input for "-".
func openInput(env *Env, file string) (io.ReadCloser, error) {
	if file == "-" {
		return io.NopCloser(env.Stdin), nil
	}
	return os.Open(file)
}

// indented is v as indented JSON for a person to read: '<', '>' and '&' as
// themselves, not \u003c (the error text "ask=<plain words>").
func indented(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// printJSON writes v indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
