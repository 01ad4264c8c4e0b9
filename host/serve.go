package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/rowcall/rowcall/internal/hostmain"
)

// serve implements `rowcall serve`: hostmain.Main, run until SIGINT or
// SIGTERM.
func serve(args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := hostmain.NewMain()
	if err := m.ParseFlags(ctx, args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	startPprof()
	if os.Getenv("GOGC") == "" {
		// Per-call garbage is short-lived: collect less often, for less CPU.
		debug.SetGCPercent(400)
	}
	if err := m.Run(ctx); err != nil {
		return errors.Join(err, m.Close())
	}
	err := m.Wait(ctx)
	slog.Info("shutting down: finishing requests in flight")
	return errors.Join(err, m.Close())
}
