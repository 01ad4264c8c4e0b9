package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/app"
)

// serveSettings are serve's flags that have a ROWCALL_* setting, under the
// names the worker reads as vars (worker/main.go): one name for one setting
// on every host.
var serveSettings = map[string]string{
	"public-reads":    "ROWCALL_PUBLIC_READS",
	"public-url":      "ROWCALL_PUBLIC_URL",
	"audience":        "ROWCALL_AUDIENCE",
	"allow-outbound":  "ROWCALL_ALLOW_OUTBOUND",
	"trust-forwarded": "ROWCALL_TRUST_FORWARDED",
	"secrets-prefix":  "ROWCALL_SECRETS_PREFIX",
	"max-conns":       "ROWCALL_MAX_CONNS",
	"no-examples":     "ROWCALL_NO_EXAMPLES",
	"embed":           "ROWCALL_EMBED",
}

// settingsFrom reads app.Settings through serve's flags: a setting with a
// flag is the flag's value (whose default envFlags took from the
// environment), any other comes from the environment.
func settingsFrom(fs *flag.FlagSet) app.Settings {
	flagOf := map[string]string{}
	for f, env := range serveSettings {
		flagOf[env] = f
	}
	return app.ReadSettings(func(name string) string {
		if f, ok := flagOf[name]; ok {
			return fs.Lookup(f).Value.String()
		}
		return os.Getenv(name)
	})
}

// envFlags makes each named environment variable, when set, the default of
// its flag in fs (a flag given on the command line still wins), and names the
// variable in the flag's help. A yes-or-no flag reads its variable as the
// worker does (rowcall.SettingOn). Call it before fs.Parse.
func envFlags(fs *flag.FlagSet, vars map[string]string) error {
	for name, env := range vars {
		f := fs.Lookup(name)
		if f == nil {
			return fmt.Errorf("envFlags: no flag --%s", name)
		}
		f.Usage += " ($" + env + ")"
		v, ok := os.LookupEnv(env)
		if !ok || v == "" {
			continue
		}
		if isBool(f) {
			v = strconv.FormatBool(rowcall.SettingOn(v))
		}
		if err := f.Value.Set(v); err != nil {
			return fmt.Errorf("$%s=%s: %w", env, v, err)
		}
		f.DefValue = v
	}
	return nil
}
