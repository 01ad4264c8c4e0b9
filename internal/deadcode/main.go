// Command deadcode lists the functions of this module that no program of it
// calls: `go run ./internal/deadcode [-wasm PKGS] [-except RE] PKGS`, where
// PKGS are main packages built natively and -wasm's (comma-separated) are
// built with GOOS=js GOARCH=wasm (the worker). A function is dead when every
// program that compiles it leaves it unreached; tests do not count as
// callers, so code only tests use is reported. It exits 1 when it finds any.
//
// It is golang.org/x/tools/cmd/deadcode's analysis (Rapid Type Analysis from
// each main's init and main) with one difference: a function counts as
// reached only along call edges and function-value references from a root.
// cmd/deadcode also counts every exported method of a type that reaches an
// interface as live once anything calls reflect.Value.MethodByName (the
// host's dependencies do, through text/template), which hides every unused
// exported method of a store or a service.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/types"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/rta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("deadcode: ")
	wasm := flag.String("wasm", "", "comma-separated main packages to build with GOOS=js GOARCH=wasm")
	except := flag.String("except", "", "regexp of package paths not to report")
	flag.Parse()

	declared := map[string]string{} // position -> "pkg.Func" for every source function seen
	live := map[string]bool{}
	if flag.NArg() > 0 {
		analyze(".", nil, flag.Args(), declared, live)
	}
	if *wasm != "" {
		analyze(".", []string{"GOOS=js", "GOARCH=wasm"}, strings.Split(*wasm, ","), declared, live)
	}
	var skip *regexp.Regexp
	if *except != "" {
		skip = regexp.MustCompile(*except)
	}
	var dead []string
	for pos, name := range declared {
		pkg, fn, _ := strings.Cut(name, " ")
		if !live[pos] && (skip == nil || !skip.MatchString(pkg)) {
			dead = append(dead, pos+": unreachable func: "+fn)
		}
	}
	sort.Strings(dead)
	for _, d := range dead {
		fmt.Println(d)
	}
	if len(dead) > 0 {
		os.Exit(1)
	}
}

// analyze loads the main packages patterns in dir with the extra environment
// env, adds each of their module's source functions to declared (by position,
// relative to dir) and marks those the programs reach in live.
func analyze(dir string, env, patterns []string, declared map[string]string, live map[string]bool) {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax | packages.NeedModule, Dir: dir, Env: append(os.Environ(), env...)}
	initial, err := packages.Load(cfg, patterns...)
	if err != nil {
		log.Fatal(err)
	}
	if packages.PrintErrors(initial) > 0 {
		log.Fatal("packages contain errors")
	}
	module := ""
	for _, p := range initial {
		if p.Module != nil {
			module = p.Module.Path
		}
	}
	prog, pkgs := ssautil.AllPackages(initial, ssa.InstantiateGenerics)
	wd, _ := filepath.Abs(dir)
	var source []*ssa.Function
	packages.Visit(initial, nil, func(p *packages.Package) {
		if p.Module == nil || p.Module.Path != module {
			return
		}
		for _, f := range p.Syntax {
			if ast.IsGenerated(f) {
				continue
			}
			for _, d := range f.Decls {
				if d, ok := d.(*ast.FuncDecl); ok {
					source = append(source, prog.FuncValue(p.TypesInfo.Defs[d.Name].(*types.Func)))
				}
			}
		}
	})
	prog.Build()
	var roots []*ssa.Function
	for _, m := range ssautil.MainPackages(pkgs) {
		roots = append(roots, m.Func("init"), m.Func("main"))
	}
	if len(roots) == 0 {
		log.Fatalf("no main package in %v", patterns)
	}
	reached := reach(roots, rta.Analyze(roots, true).CallGraph)
	for fn := range reached {
		if o := fn.Origin(); o != nil {
			reached[o] = true // a generic function is live when an instance is
		}
	}
	var ifaces []*types.Interface // every named interface of the program
	packages.Visit(initial, nil, func(p *packages.Package) {
		for _, n := range p.Types.Scope().Names() {
			if t, ok := p.Types.Scope().Lookup(n).(*types.TypeName); ok && types.IsInterface(t.Type()) {
				ifaces = append(ifaces, t.Type().Underlying().(*types.Interface))
			}
		}
	})
	where := func(fn *ssa.Function) string {
		p := prog.Fset.Position(fn.Pos())
		if rel, err := filepath.Rel(wd, p.Filename); err == nil {
			p.Filename = rel
		}
		return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
	}
	for _, fn := range source {
		if fn.Name() == "init" || fn.Name() == "main" {
			continue
		}
		pos := where(fn)
		name := fn.Name()
		if recv := fn.Signature.Recv(); recv != nil {
			t := recv.Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			if n, ok := types.Unalias(t).(*types.Named); ok {
				name = n.Obj().Name() + "." + name
			}
		}
		declared[pos] = fn.Pkg.Pkg.Path() + " " + name
		if reached[fn] || implements(fn, ifaces) {
			live[pos] = true
		}
	}
}

// implements reports whether the method fn is one of an interface's methods
// that its receiver type satisfies: it must stay while the type is used as
// that interface, even if nothing calls that one method (database/sql's
// driver.Result.LastInsertId, say).
func implements(fn *ssa.Function, ifaces []*types.Interface) bool {
	recv := fn.Signature.Recv()
	if recv == nil {
		return false
	}
	t := recv.Type()
	if _, ok := t.(*types.Pointer); !ok {
		t = types.NewPointer(t) // *T's method set holds T's
	}
	for _, it := range ifaces {
		for i := range it.NumMethods() {
			if it.Method(i).Name() == fn.Name() && types.Implements(t, it) {
				return true
			}
		}
	}
	return false
}

// reach walks the call graph from roots, following call edges and the
// functions each reached body refers to as values (closures, method values,
// functions stored or passed), and returns every function it meets. Anonymous
// functions are folded into the function that declares them.
func reach(roots []*ssa.Function, cg *callgraph.Graph) map[*ssa.Function]bool {
	seen := map[*ssa.Function]bool{}
	work := append([]*ssa.Function(nil), roots...)
	for len(work) > 0 {
		fn := work[len(work)-1]
		work = work[:len(work)-1]
		if fn == nil || seen[fn] {
			continue
		}
		seen[fn] = true
		if fn.Parent() != nil {
			work = append(work, fn.Parent())
		}
		if n := cg.Nodes[fn]; n != nil {
			for _, e := range n.Out {
				work = append(work, e.Callee.Func)
			}
		}
		var ops []*ssa.Value
		for _, b := range fn.Blocks {
			for _, in := range b.Instrs {
				for _, op := range in.Operands(ops[:0]) {
					if f, ok := (*op).(*ssa.Function); ok {
						work = append(work, f)
					}
				}
			}
		}
		work = append(work, fn.AnonFuncs...)
	}
	return seen
}
