package cli

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"runtime/debug"

	"github.com/rowcall/rowcall/internal/hostmain"
)

// ServeCommand is `rowcall serve`: hostmain.Main, run until ctx ends (host/
// ends it on SIGINT or SIGTERM).
type ServeCommand struct{ m *hostmain.Main }

func (c *ServeCommand) Usage() (string, string) {
	return "", "run the host: the directory and dispatcher over HTTP, on the embedded SQLite file under --data or a libSQL server (--db)"
}

func (c *ServeCommand) Flags(fs *flag.FlagSet) { hostmain.NewMain().Flags(fs) }

// ParseArgs parses serve's command line with hostmain.Main.ParseFlags, the
// parse the tests boot the host with.
func (c *ServeCommand) ParseArgs(ctx context.Context, env *Env, args []string) (*flag.FlagSet, []string, error) {
	c.m = hostmain.NewMain()
	c.m.LookupEnv, c.m.Stdout = env.LookupEnv, env.Stdout
	err := c.m.ParseFlags(ctx, args)
	return c.m.FlagSet(), nil, err
}

func (c *ServeCommand) Run(ctx context.Context, env *Env, args []string) error {
	if env.Getenv("GOGC") == "" {
		// Per-call garbage is short-lived: collect less often, for less CPU.
		debug.SetGCPercent(400)
	}
	if err := c.m.Run(ctx); err != nil {
		return errors.Join(err, c.m.Close())
	}
	err := c.m.Wait(ctx)
	slog.Info("shutting down: finishing requests in flight")
	return errors.Join(err, c.m.Close())
}
