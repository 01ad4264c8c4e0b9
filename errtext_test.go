package rowcall

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// errRenderers are the files that may write the seed's "ERR:" text: the
// Failure renderer, and the edges that answer in it without a runner's
// Failure (MCP's own refusals; the contract document's failure table).
var errRenderers = map[string]bool{
	"failure.go":                    true,
	"api/mcp/tools.go":              true,
	"internal/contract/contract.go": true,
}

// TestNoERRTextInTheCore walks the module's Go source (not its tests, not the
// black-box harness under test/, which reads answers as a client does) and
// fails on any string literal starting "ERR:" outside errRenderers — a
// failure made as text instead of a rowcall.Failure (prose that mentions one,
// such as a flag's help, is fine) — and, everywhere, on "ERR" text
// read back: passed to a strings function (HasPrefix, Cut, SplitN, …) or
// compared with == or != (out.Result[:4] == "ERR:").
func TestNoERRTextInTheCore(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch {
			case path == "test", path == "build", d.Name() == "node_modules", path != "." && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		rel := filepath.ToSlash(path)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s := litText(n); strings.HasPrefix(s, "ERR:") && !errRenderers[rel] {
					t.Errorf("%s: %q: make a rowcall.Failure (or an edge's answer in errRenderers), not ERR: text", fset.Position(n.Pos()), s)
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "strings" || pkg.Name == "bytes") {
						for _, a := range n.Args {
							if lit, ok := a.(*ast.BasicLit); ok && strings.Contains(litText(lit), "ERR") {
								t.Errorf("%s: strings.%s reads ERR text back; use Output.Fail", fset.Position(n.Pos()), sel.Sel.Name)
							}
						}
					}
				}
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					for _, x := range []ast.Expr{n.X, n.Y} {
						if lit, ok := x.(*ast.BasicLit); ok && strings.HasPrefix(litText(lit), "ERR") {
							t.Errorf("%s: compares with ERR text; use Output.Fail", fset.Position(n.Pos()))
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files; is the walk rooted at the module?", checked)
	}
}

func litText(l *ast.BasicLit) string {
	if l.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(l.Value)
	if err != nil {
		return l.Value
	}
	return s
}
