package hostmain

import (
	"flag"

	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/envflag"
)

// settingsFrom reads app.Settings through serve's flags: a setting that is a
// flag's variable (--public-reads is ROWCALL_PUBLIC_READS: envflag.Var) is the
// flag's value, which envflag.Parse took from the variable when the command
// line did not give it; any other setting comes from the environment (lookup).
// One name, one setting, on the host as on the worker.
func settingsFrom(fs *flag.FlagSet, lookup func(string) (string, bool)) app.Settings {
	flags := map[string]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) { flags[envflag.Var(f)] = f })
	return app.ReadSettings(func(name string) string {
		if f, ok := flags[name]; ok {
			return f.Value.String()
		}
		v, _ := lookup(name)
		return v
	})
}
