package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/openapi"
)

// ImportOpenAPICommand is `rowcall import openapi FILE`: one http row per
// operation of an OpenAPI 3.0/3.1 document. The document is converted here
// (internal/openapi), so it works against every host, the worker too, and its
// rows go to POST /api/import?if_match=1&source= in batches with a progress
// bar: a dry run of all of them first, then the writes, each guarded by the
// version it was compared with. It first lists every row's key, the origin
// its target reaches and its auth; the rows target --server (else the
// document's server), carry exactly --auth, record the import's source, and
// never replace a row this import did not make unless --replace.
type ImportOpenAPICommand struct {
	client
	opts    openapi.Options
	dry     bool
	replace bool
	batch   int
	origins string // --allow-origins
	types   string // --allow-types
}

func (c *ImportOpenAPICommand) Usage() (string, string) {
	return "FILE", "one http row per operation of an OpenAPI document (JSON or YAML; - for stdin): created, updated or unchanged"
}

func (c *ImportOpenAPICommand) Flags(fs *flag.FlagSet) {
	c.client.flags(fs)
	fs.StringVar(&c.opts.Prefix, "prefix", "", "put before every key, e.g. STRIPE_")
	fs.StringVar(&c.opts.Category, "category", "", "every row's category (else each operation's first tag)")
	fs.StringVar(&c.opts.Auth, "auth", "", "every row's auth spec, e.g. bearer:STRIPE_KEY")
	fs.StringVar(&c.opts.Server, "server", "", "the base URL of every target, instead of the document's servers")
	fs.BoolVar(&c.opts.TrustExtensions, "trust-extensions", false, "import each operation's x-rowcall as its row (re-importing your own export): still http rows on the server's origin with no owner-key auth, unless allowed below")
	fs.StringVar(&c.origins, "allow-origins", "", "with --trust-extensions: more origins x-rowcall targets may name, comma-separated")
	fs.StringVar(&c.types, "allow-types", "", "with --trust-extensions: row types besides http x-rowcall may make, comma-separated (fn, agent, flow)")
	fs.BoolVar(&c.opts.AllowOwnerAuth, "allow-owner-auth", false, "with --trust-extensions: x-rowcall auth may read the owner key")
	fs.BoolVar(&c.replace, "replace", false, "replace rows of the same keys that this import did not make (by hand, or by another import)")
	fs.BoolVar(&c.dry, "dry-run", false, "report what would change; change nothing")
	fs.IntVar(&c.batch, "batch", 100, "rows per request (at most 1000)")
}

func (c *ImportOpenAPICommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: rowcall import openapi FILE [--prefix P] [--category C] [--auth bearer:VAR] [--server URL] [--replace] [--trust-extensions [--allow-origins O] [--allow-types T] [--allow-owner-auth]] [--dry-run] [--url URL]   (JSON or YAML; - for stdin)")
	}
	in, err := openInput(env, args[0])
	if err != nil {
		return err
	}
	doc, err := io.ReadAll(in)
	in.Close()
	if err != nil {
		return err
	}
	c.opts.AllowOrigins, c.opts.AllowTypes = strings.Split(c.origins, ","), strings.Split(c.types, ",")
	res, err := openapi.Convert(doc, c.opts)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	for _, s := range res.Skipped {
		fmt.Fprintln(env.Stderr, "skipped", s)
	}
	fmt.Fprintf(env.Stderr, "%s: %d operations\n", args[0], len(res.Rows))
	fmt.Fprintf(env.Stdout, "server %s (import %s)\n", res.Server, res.Source)
	rows := make([]json.RawMessage, len(res.Rows))
	for i := range res.Rows {
		r := &res.Rows[i]
		rows[i], _ = json.Marshal(r)
		auth := r.Auth
		if auth == "" {
			auth = "none"
		}
		fmt.Fprintf(env.Stdout, "  %s  %s %s  auth %s\n", r.Key, r.Type, r.Origin(), auth)
	}
	n := min(max(c.batch, 1), api.MaxImportBatch)
	each := func(fn func(rows []json.RawMessage, done int) error) error {
		for start := 0; start < len(rows); start += n {
			end := min(start+n, len(rows))
			if err := fn(rows[start:end], end); err != nil {
				return err
			}
		}
		return nil
	}
	c.connect(ctx, env)
	q := url.Values{"if_match": {"1"}, "source": {res.Source}}
	if c.replace {
		q.Set("replace", "1")
	}
	return importPasses(env, &c.client, each, len(rows), c.dry, q.Encode())
}
