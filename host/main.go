// Command rowcall is the local host: it serves the directory and dispatcher over
// HTTP on the embedded SQLite file (or a libSQL server: --db URL), migrates the
// database, and talks to a running host from the command line. `rowcall
// --help` lists every command with its flags; each command lives in
// internal/cli, the host itself in internal/hostmain.
//
// This package is wiring only: the process's signals, arguments and exit
// status.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rowcall/rowcall/internal/cli"
)

func main() {
	// SIGINT or SIGTERM ends ctx (serve shuts down, a client command's
	// request ends); a second one ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	os.Exit(cli.Main(ctx, os.Args[1:], cli.OS()))
}
