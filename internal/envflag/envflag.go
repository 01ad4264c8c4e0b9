// Package envflag parses a standard flag.FlagSet from the command line and
// then from the environment: every flag has one variable, ROWCALL_ and its
// name in capitals with _ for - (--public-url is $ROWCALL_PUBLIC_URL), unless
// its Value names another (an EnvVar method). A flag given on the command line
// wins over its variable; an empty variable counts as unset; a yes-or-no flag
// reads its variable as the worker reads its settings (rowcall.SettingOn:
// 1, true, yes, on).
//
//	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
//	addr := fs.String("addr", "127.0.0.1:8787", "listen address")
//	pos, err := envflag.Parse(fs, os.Args[2:], os.LookupEnv) // flags may follow the positional arguments
//	envflag.PrintDefaults(os.Stderr, fs)                      // each flag with its variable
package envflag

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall"
)

// Prefix starts every flag's variable.
const Prefix = "ROWCALL_"

// Var is the environment variable of f.
func Var(f *flag.Flag) string {
	if v, ok := f.Value.(interface{ EnvVar() string }); ok {
		return v.EnvVar()
	}
	return Prefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
}

// IsBool reports whether f is a yes-or-no flag (--name alone sets it).
func IsBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Parse parses args into fs — flags may come before, between or after the
// positional arguments, which it returns in order; "-" is one, and every
// argument after "--" is one — then sets each flag not given from its
// variable, read with lookup.
func Parse(fs *flag.FlagSet, args []string, lookup func(name string) (string, bool)) (positional []string, err error) {
	var flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil && !hasValue && !IsBool(f) && i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	if err := fs.Parse(flags); err != nil {
		return nil, err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		v, ok := lookup(Var(f))
		if !ok || v == "" {
			return
		}
		if IsBool(f) {
			v = strconv.FormatBool(rowcall.SettingOn(v))
		}
		if e := f.Value.Set(v); e != nil {
			err = fmt.Errorf("$%s=%s: %w", Var(f), v, e)
		}
	})
	return positional, err
}

// PrintDefaults writes one entry per flag of fs: its name and value type,
// its variable, its help and its default.
func PrintDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if kind != "" {
			name += " " + kind
		}
		fmt.Fprintf(w, "  %s  $%s\n      %s", name, Var(f), usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}
