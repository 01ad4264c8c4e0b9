package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/hostmain"
)

// rotateKey implements `rowcall key rotate`: a new owner key becomes current,
// the old one stays valid for the window, and a running host picks both up
// within a second.
func rotateKey(args []string) error {
	fs := flag.NewFlagSet("key rotate", flag.ExitOnError)
	dir := fs.String("data", "./data", "data directory holding owner.key")
	window := fs.Duration("window", 24*time.Hour, "how long the previous key stays valid")
	fs.Parse(args)
	until, err := hostmain.RotateOwnerKey(*dir, *window)
	if err != nil {
		return err
	}
	fmt.Printf("New owner key written to %s/owner.key; the previous key stays valid until %s.\n", *dir, until)
	if os.Getenv(rowcall.OwnerEnv) != "" {
		fmt.Fprintf(os.Stderr, "$%s is set here: commands run with it send the previous key, and a host started with it\n"+
			"uses it instead of owner.key. Export the new key: export %s=$(cat %s/owner.key)\n", rowcall.OwnerEnv, rowcall.OwnerEnv, *dir)
	}
	return nil
}
