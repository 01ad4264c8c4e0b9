package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// ImportCommand is `rowcall import FILE [--dry-run]`. It streams the file's
// rows in batches: first a dry run of every batch (so a bad row anywhere
// changes nothing), then, unless --dry-run, the writes, with a progress bar.
type ImportCommand struct {
	client
	dry   bool
	batch int
}

func (c *ImportCommand) Usage() (string, string) {
	return "FILE", "write the rows of a registry file (from export; - for stdin) to a running host: created, updated or unchanged"
}

func (c *ImportCommand) Flags(fs *flag.FlagSet) {
	c.client.flags(fs)
	fs.BoolVar(&c.dry, "dry-run", false, "report what would change; change nothing")
	fs.IntVar(&c.batch, "batch", 500, "rows per request (at most 1000)")
}

func (c *ImportCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: rowcall import FILE [--dry-run] [--url URL]   (FILE from `rowcall export`; - for stdin)")
	}
	c.connect(ctx, env)
	each := func(fn func(rows []json.RawMessage, done int) error) error {
		return eachBatch(env, args[0], c.batch, fn)
	}
	return importPasses(env, &c.client, each, 0, c.dry, "")
}

// importPasses sends rows to POST /api/import in the batches each yields:
// first a dry run of every batch (so a bad row anywhere changes nothing),
// then, unless dry, the writes, each pass with a progress bar (over total
// rows, when known); then it prints what changed. query is added to every
// request (if_match=1 for guarded writes).
func importPasses(env *Env, c *client, each func(func(rows []json.RawMessage, done int) error) error, total int, dry bool, query string) error {
	var sum report
	pass := func(dryRun bool, label string) error {
		sum = report{}
		bar := newProgress(env.Stderr, label)
		bar.total = total
		err := each(func(rows []json.RawMessage, done int) error {
			path := "/api/import?" + strings.TrimPrefix(query+"&dry_run=1", "&")
			if !dryRun {
				path = strings.TrimSuffix("/api/import?"+query, "?")
			}
			status, out, err := c.do("POST", path, map[string]any{"rows": rows})
			if err != nil {
				return err
			}
			var r report
			b, _ := json.Marshal(out)
			json.Unmarshal(b, &r)
			sum.add(r, done-len(rows))
			if status != 200 && len(r.Invalid) == 0 {
				return fmt.Errorf("HTTP %d: %s", status, b)
			}
			bar.show(done)
			return nil
		})
		bar.finish()
		return err
	}
	return dryRunFirst(env, &sum, dry, func(dryRun bool) error {
		label := "importing"
		if dryRun {
			label = "checking"
		}
		return pass(dryRun, label)
	})
}

// dryRunFirst runs pass as a dry run, stops on invalid rows, then (unless
// dry) runs it for real, and prints what changed: every import's two passes
// and report. sum is what the last pass found.
func dryRunFirst(env *Env, sum *report, dry bool, pass func(dryRun bool) error) error {
	if err := pass(true); err != nil {
		return err
	}
	if len(sum.Invalid) > 0 {
		for _, p := range sum.Invalid {
			fmt.Fprintf(env.Stderr, "row %d (%s): %s\n", p.Index, p.Key, p.Error)
		}
		return fmt.Errorf("%d invalid rows; nothing was imported", len(sum.Invalid))
	}
	if !dry {
		if err := pass(false); err != nil {
			return err
		}
	}
	verb := "would create"
	if !dry {
		verb = "created"
	}
	fmt.Fprintf(env.Stdout, "%s %d, %s %d, unchanged %d\n", verb, len(sum.Created), strings.Replace(verb, "create", "update", 1), len(sum.Updated), sum.Unchanged)
	for _, u := range sum.Updated {
		fmt.Fprintf(env.Stdout, "  update %s: %s\n", u.Key, strings.Join(u.Fields, ", "))
	}
	return nil
}

type report struct {
	Created []string `json:"created"`
	Updated []struct {
		Key    string   `json:"key"`
		Fields []string `json:"fields"`
	} `json:"updated"`
	Unchanged int `json:"unchanged"`
	Invalid   []struct {
		Index int    `json:"index"`
		Key   string `json:"key"`
		Error string `json:"error"`
	} `json:"invalid"`
}

func (r *report) add(o report, offset int) {
	r.Created = append(r.Created, o.Created...)
	r.Updated = append(r.Updated, o.Updated...)
	r.Unchanged += o.Unchanged
	for _, p := range o.Invalid {
		p.Index += offset
		r.Invalid = append(r.Invalid, p)
	}
}

// eachBatch streams the rows of an export file ({"rows":[…]} or a bare array)
// and calls fn with batches of at most n rows (and under 3 MB each).
func eachBatch(env *Env, file string, n int, fn func(rows []json.RawMessage, done int) error) error {
	in, err := openInput(env, file)
	if err != nil {
		return err
	}
	defer in.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(in, 1<<20))
	if err := toRows(dec); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	var rows []json.RawMessage
	size, done := 0, 0
	for dec.More() {
		var row json.RawMessage
		if err := dec.Decode(&row); err != nil {
			return fmt.Errorf("%s: row %d: %w", file, done, err)
		}
		rows, size, done = append(rows, row), size+len(row), done+1
		if len(rows) >= n || size > 3<<20 {
			if err := fn(rows, done); err != nil {
				return err
			}
			rows, size = nil, 0
		}
	}
	if len(rows) > 0 {
		return fn(rows, done)
	}
	return nil
}

// toRows advances dec to the first element of the rows array.
func toRows(dec *json.Decoder) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t == json.Delim('[') {
		return nil
	}
	if t != json.Delim('{') {
		return fmt.Errorf(`expected {"rows":[…]} or an array of rows`)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		if k == "rows" {
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return fmt.Errorf(`"rows" must be an array`)
			}
			return nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return fmt.Errorf(`no "rows" array`)
}

// progress draws a bar on a terminal, and nothing otherwise.
type progress struct {
	w     io.Writer
	label string
	tty   bool
	last  int
	total int // when known, the bar is the share done
}

func newProgress(w io.Writer, label string) *progress {
	f, ok := w.(*os.File)
	if !ok {
		return &progress{w: w, label: label}
	}
	st, err := f.Stat()
	return &progress{w: w, label: label, tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (p *progress) show(done int) {
	p.last = done
	if p.tty {
		n := min(done/500+1, 40)
		if p.total > 0 {
			n = max(1, done*40/p.total)
		}
		fmt.Fprintf(p.w, "\r%-10s %s %d rows", p.label, strings.Repeat("█", n), done)
	}
}

func (p *progress) finish() {
	if p.tty {
		fmt.Fprintf(p.w, "\r%-10s done: %d rows%s\n", p.label, p.last, strings.Repeat(" ", 40))
	}
}
