// Command rowcall is the local host: it serves the directory and dispatcher over
// HTTP on the embedded SQLite file (or a libSQL server: --db URL), migrates the
// database, and talks to a running host from the command line. `rowcall
// --help` lists every command with its flags; each command lives in
// internal/cli, the host itself in internal/hostmain.
//
// This package is wiring only: the process's signals, arguments, the garbage
// collector's pace and exit status.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/rowcall/rowcall/internal/cli"
)

// serveGOGC is `rowcall serve`'s GOGC when the environment sets none: a
// dispatch allocates about 33 KB that is garbage once it is answered (most of
// it wazero's fresh instance), against a live heap of a few tens of MB, so
// Go's default of 100 runs a collection every few thousand calls under load.
// 400 cuts the collector's CPU per call by about 4× for a heap that peaks at
// 5× the live one (docs/RATIONALE.md, "Why does serve run the garbage
// collector at GOGC=400?"; docs/benchmarks.md, "Memory").
const serveGOGC = 400

func main() {
	if _, set := os.LookupEnv("GOGC"); !set && len(os.Args) > 1 && os.Args[1] == "serve" {
		debug.SetGCPercent(serveGOGC)
	}
	// SIGINT or SIGTERM ends ctx (serve shuts down, a client command's
	// request ends); a second one ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	os.Exit(cli.Main(ctx, os.Args[1:], cli.OS()))
}
