package modules

import (
	"fmt"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/fuel"
)

// The bounds on a module's code. Compile time and memory grow with these
// numbers rather than with a module's size (a 55-byte body can declare 50
// million locals), so Inspect refuses a module past any of them before a
// compiler sees its bytes, with CodeTooComplex and the limit's name as the
// error's argument (module_too_complex:locals). Each is far above what
// real compilers write: see docs/security.md for the example modules' numbers.
const (
	MaxFunctions   = 100_000   // functions a module defines ("functions")
	MaxBodySize    = 1 << 20   // bytes of one function body ("body_size")
	MaxLocals      = 50_000    // locals of one function ("locals")
	MaxTotalLocals = 1_000_000 // locals of all its functions together ("total_locals")
	MaxNesting     = 5_000     // blocks, loops and ifs open at once in a function ("nesting")
	MaxBrTable     = 20_000    // labels of one br_table ("br_table")
)

// CodeTooComplex is the code of a module refused for one of the bounds above;
// its argument names the bound.
const CodeTooComplex rowcall.Code = "module_too_complex"

// readCode checks the code section against the bounds, reading every function
// body once.
func readCode(r *reader) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	if n > MaxFunctions {
		return tooComplex("functions", uint64(n), MaxFunctions, -1,
			"drop unused code (wasm-opt --remove-unused-module-elements, or the linker's --gc-sections) or split the module")
	}
	var total uint64
	for i := range int(n) {
		size, err := r.u32()
		if err != nil {
			return err
		}
		if size > MaxBodySize {
			return tooComplex("body_size", uint64(size), MaxBodySize, i,
				"split the function (an enormous function is usually generated code or a huge literal table: move the data to a data segment)")
		}
		body, err := r.take(int(size))
		if err != nil {
			return fmt.Errorf("function %d: %w", i, err)
		}
		s, err := fuel.Scan(body)
		if err != nil {
			return &rowcall.Error{
				Code:     CodeInvalid,
				Message:  fmt.Sprintf("module's function %d (in the code section) cannot be read: %s", i, strings.TrimPrefix(err.Error(), "fuel: ")),
				HowToFix: "upload the whole .wasm file, built for WebAssembly 2.0 (no exceptions, threads or GC instructions); see wasm/ABI.md",
			}
		}
		switch {
		case s.Locals > MaxLocals:
			return tooComplex("locals", s.Locals, MaxLocals, i, "declare fewer locals: build with optimisation (-O2, -Os), which reuses them")
		case s.Depth > MaxNesting:
			return tooComplex("nesting", uint64(s.Depth), MaxNesting, i, "flatten the nested blocks: split the function or turn a long if/else chain into a switch")
		case s.Targets > MaxBrTable:
			return tooComplex("br_table", s.Targets, MaxBrTable, i, "split the switch statement, or look the value up in a table in memory")
		}
		if total += s.Locals; total > MaxTotalLocals {
			return tooComplex("total_locals", total, MaxTotalLocals, -1, "build with optimisation (-O2, -Os), which reuses locals, or split the module")
		}
	}
	return nil
}

// bounds names each bound: what its number counts, and its constant.
var bounds = map[string][2]string{
	"functions": {"functions", "MaxFunctions"}, "body_size": {"bytes of code", "MaxBodySize"},
	"locals": {"locals", "MaxLocals"}, "total_locals": {"locals in all its functions", "MaxTotalLocals"},
	"nesting": {"levels of nested blocks", "MaxNesting"}, "br_table": {"labels in one br_table", "MaxBrTable"},
}

// tooComplex is the refusal of a module past one bound; fn is the function's
// index in the code section, or -1 for a bound on the whole module.
func tooComplex(what string, got, limit uint64, fn int, fix string) error {
	where := "module"
	extra := map[string]any{"limit": what, "value": got, "max": limit}
	if fn >= 0 {
		where = fmt.Sprintf("module's function %d (in the code section)", fn)
		extra["function"] = fn
	}
	noun, constant := bounds[what][0], bounds[what][1]
	return &rowcall.Error{
		Code:     CodeTooComplex,
		Args:     []string{what},
		Message:  fmt.Sprintf("%s has %d %s; the sandbox accepts at most %d (modules.%s), because compile time and memory grow with it", where, got, noun, limit, constant),
		HowToFix: fix,
		Extra:    extra,
	}
}
