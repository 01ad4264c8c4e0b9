package askeval

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/openapi"
)

// Set is one dev set: intents, the rows they name, and the directory they
// are asked in. Sets lists them; "dev" is the original set (targets.jsonl,
// intents.jsonl and the generated distractors), "mcp" and "openapi" are the
// sets of mcp/README.md and openapi/README.md.
type Set struct {
	Name    string
	Targets []rowcall.Row             // the rows the intents name, and what their kinds are checked against
	Intents []Intent                  // labelled with kind and split as the README says
	Rows    func(n int) []rowcall.Row // the directory: the targets and, for dev, n distractors
}

//go:embed mcp/targets.jsonl
var mcpTargetsJSONL []byte

//go:embed mcp/intents.jsonl
var mcpIntentsJSONL []byte

//go:embed openapi/intents.jsonl
var openapiIntentsJSONL []byte

// SetNames are the sets' names, in the order the score command reports them.
var SetNames = []string{"dev", "mcp", "openapi"}

// LoadSet returns the set named name (one of SetNames).
func LoadSet(name string) (Set, error) {
	switch name {
	case "dev":
		return Set{Name: name, Targets: Targets(), Intents: Intents(), Rows: Directory}, nil
	case "mcp":
		rows := readTargets(mcpTargetsJSONL)
		return Set{Name: name, Targets: rows, Intents: readIntents(mcpIntentsJSONL), Rows: func(int) []rowcall.Row { return rows }}, nil
	case "openapi":
		rows, err := OpenAPIRows()
		if err != nil {
			return Set{}, err
		}
		return Set{Name: name, Targets: rows, Intents: readIntents(openapiIntentsJSONL), Rows: func(int) []rowcall.Row { return rows }}, nil
	}
	return Set{}, fmt.Errorf("no dev set %q; the sets are %v", name, SetNames)
}

// OpenAPIDocuments are the vendored OpenAPI documents the openapi set's
// directory is imported from, under internal/openapi/testdata.
var OpenAPIDocuments = []string{"github-rest.json", "train-travel.json", "petstore.yaml"}

// OpenAPIRows imports OpenAPIDocuments as `rowcall import openapi` does
// (openapi.Convert, no options): one row per operation, in document order.
func OpenAPIRows() ([]rowcall.Row, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, fmt.Errorf("askeval: cannot locate the package's source")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "internal", "openapi", "testdata")
	var rows []rowcall.Row
	for _, d := range OpenAPIDocuments {
		doc, err := os.ReadFile(filepath.Join(dir, d))
		if err != nil {
			return nil, err
		}
		res, err := openapi.Convert(doc, openapi.Options{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		for _, r := range res.Rows {
			if !slices.ContainsFunc(rows, func(o rowcall.Row) bool { return o.Key == r.Key }) {
				rows = append(rows, r)
			}
		}
	}
	return rows, nil
}
