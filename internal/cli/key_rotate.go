package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/hostmain"
)

// KeyRotateCommand is `rowcall key rotate`: a new owner key becomes current,
// the old one stays valid for the window, and a running host picks both up
// within a second.
type KeyRotateCommand struct {
	data   string
	window time.Duration
}

func (c *KeyRotateCommand) Usage() (string, string) {
	return "", "make a new owner key; the old one stays valid for --window"
}

func (c *KeyRotateCommand) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.data, "data", "./data", "data directory holding owner.key")
	fs.DurationVar(&c.window, "window", 24*time.Hour, "how long the previous key stays valid")
}

func (c *KeyRotateCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 0 {
		return usageError("key rotate", c)
	}
	until, err := hostmain.RotateOwnerKey(c.data, c.window)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "New owner key written to %s/owner.key; the previous key stays valid until %s.\n", c.data, until)
	if env.Getenv(rowcall.OwnerEnv) != "" {
		fmt.Fprintf(env.Stderr, "$%s is set here: commands run with it send the previous key, and a host started with it\n"+
			"uses it instead of owner.key. Export the new key: export %s=$(cat %s/owner.key)\n", rowcall.OwnerEnv, rowcall.OwnerEnv, c.data)
	}
	return nil
}
