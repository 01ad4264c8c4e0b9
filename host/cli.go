package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/hostmain"
)

// client is the flags and credential shared by the commands that talk to a
// running host.
type client struct {
	base, key string
	keyFrom   string // where key came from, for a 401's message
}

// clientFlags parses args (flags may follow the positional arguments) and
// returns the positional ones.
func clientFlags(name string, args []string, extra func(*flag.FlagSet)) (client, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	base := fs.String("url", envOr("ROWCALL_URL", "http://127.0.0.1:8787"), "the host's base URL ($ROWCALL_URL)")
	data := fs.String("data", "./data", "data directory holding owner.key (when $"+rowcall.OwnerEnv+" is unset)")
	if extra != nil {
		extra(fs)
	}
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			if f := fs.Lookup(strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")); f != nil && !strings.Contains(a, "=") && !hostmain.IsBoolFlag(f) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	if err := fs.Parse(flags); err != nil {
		return client{}, nil, err
	}
	c := client{base: strings.TrimRight(*base, "/"), key: strings.TrimSpace(os.Getenv(rowcall.OwnerEnv))}
	c.keyFrom = "the owner key sent came from $" + rowcall.OwnerEnv
	if c.key == "" {
		file := filepath.Join(*data, "owner.key")
		b, err := os.ReadFile(file)
		c.key = strings.TrimSpace(string(b))
		c.keyFrom = "the owner key sent came from " + file + " ($" + rowcall.OwnerEnv + " is unset)"
		if c.key == "" {
			c.keyFrom = fmt.Sprintf("no owner key was sent: $%s is unset and %s holds none (%v)", rowcall.OwnerEnv, file, err)
		}
	}
	return c, pos, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// raw sends one request with the owner key.
func (c client) raw(method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("x-terminal-key", c.key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w (is `rowcall serve` running at %s?)", err, c.base)
	}
	if res.StatusCode == http.StatusUnauthorized {
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return nil, fmt.Errorf("HTTP 401 %s from %s: %s; set $%s to this host's owner key, or pass --data with its data directory",
			bytes.TrimSpace(raw), c.base, c.keyFrom, rowcall.OwnerEnv)
	}
	return res, nil
}

// text sends one GET and returns the answer's body as it is.
func (c client) text(path string) (int, string, error) {
	res, err := c.raw("GET", path, nil)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

// do sends one request and decodes the JSON answer.
func (c client) do(method, path string, body any) (int, map[string]any, error) {
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

// call implements `rowcall call KEY ['a|b']`: prints the result, and the
// receipt link on stderr. It exits non-zero when the result is an ERR.
func call(args []string) error {
	var shape *bool
	c, pos, err := clientFlags("call", args, func(fs *flag.FlagSet) {
		shape = fs.Bool("shape", false, "show the request that would be sent; send nothing")
	})
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("usage: rowcall call KEY ['ARG1|ARG2'] [--shape] [--url URL]")
	}
	body := ""
	if len(pos) == 2 {
		body = pos[1]
	}
	status, out, err := c.do("POST", "/api/dispatch", map[string]any{"key": pos[0], "body": body, "shape": *shape})
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		pretty, _ := json.MarshalIndent(out, "", "  ")
		return fmt.Errorf("HTTP %d\n%s", status, pretty)
	}
	if *shape {
		pretty, _ := json.MarshalIndent(out["shape"], "", "  ")
		fmt.Println(string(pretty))
	}
	fmt.Println(out["result"])
	if p, ok := out["proof"].(map[string]any); ok {
		fmt.Fprintf(os.Stderr, "receipt %v: %v\n", p["invocation_id"], p["public_receipt"])
	}
	if out["ok"] != true {
		os.Exit(1)
	}
	return nil
}

// receipt implements `rowcall receipt inv_…`.
func receipt(args []string) error {
	c, pos, err := clientFlags("receipt", args, nil)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: rowcall receipt INVOCATION_ID [--url URL]")
	}
	status, out, err := c.do("GET", "/api/dispatch?confirm="+url.QueryEscape(pos[0]), nil)
	if err != nil {
		return err
	}
	pretty, _ := json.MarshalIndent(out, "", "  ")
	fmt.Println(string(pretty))
	if status != http.StatusOK {
		return fmt.Errorf("no receipt %s", pos[0])
	}
	return nil
}
