package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/openapi"
)

// importCmd implements `rowcall import`: `import openapi FILE …` reads an
// OpenAPI document, anything else a registry file (importRegistry).
func importCmd(args []string) error {
	if len(args) > 0 && args[0] == "openapi" {
		return importOpenAPI(args[1:])
	}
	return importRegistry(args)
}

// importOpenAPI implements `rowcall import openapi FILE [--prefix P]
// [--category C] [--auth bearer:VAR] [--server URL] [--dry-run]`: the
// document is converted here (internal/openapi), so it works against every
// host, the worker too, and its rows go to POST /api/import?if_match=1 in
// batches with a progress bar: a dry run of all of them first, then the
// writes, each guarded by the version it was compared with.
func importOpenAPI(args []string) error {
	var o openapi.Options
	var dry *bool
	var batch *int
	c, pos, err := clientFlags("import openapi", args, func(fs *flag.FlagSet) {
		fs.StringVar(&o.Prefix, "prefix", "", "put before every key, e.g. STRIPE_")
		fs.StringVar(&o.Category, "category", "", "every row's category (else each operation's first tag)")
		fs.StringVar(&o.Auth, "auth", "", "every row's auth spec, e.g. bearer:STRIPE_KEY")
		fs.StringVar(&o.Server, "server", "", "the base URL of every target, instead of the document's servers")
		dry = fs.Bool("dry-run", false, "report what would change; change nothing")
		batch = fs.Int("batch", 100, "rows per request (at most 1000)")
	})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: rowcall import openapi FILE [--prefix P] [--category C] [--auth bearer:VAR] [--server URL] [--dry-run] [--url URL]   (JSON or YAML; - for stdin)")
	}
	in, err := openInput(pos[0])
	if err != nil {
		return err
	}
	doc, err := io.ReadAll(in)
	in.Close()
	if err != nil {
		return err
	}
	res, err := openapi.Convert(doc, o)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	for _, s := range res.Skipped {
		fmt.Fprintln(os.Stderr, "skipped", s)
	}
	fmt.Fprintf(os.Stderr, "%s: %d operations\n", pos[0], len(res.Rows))
	rows := make([]json.RawMessage, len(res.Rows))
	for i := range res.Rows {
		rows[i], _ = json.Marshal(res.Rows[i])
	}
	n := min(max(*batch, 1), api.MaxImportBatch)
	each := func(fn func(rows []json.RawMessage, done int) error) error {
		for start := 0; start < len(rows); start += n {
			end := min(start+n, len(rows))
			if err := fn(rows[start:end], end); err != nil {
				return err
			}
		}
		return nil
	}
	return importPasses(c, each, len(rows), *dry, "if_match=1")
}

// openapiRows is the host's converter for POST /api/import/openapi.
func openapiRows(doc []byte, o api.OpenAPIOptions) ([]rowcall.Row, []string, error) {
	res, err := openapi.Convert(doc, openapi.Options(o))
	return res.Rows, res.Skipped, err
}
