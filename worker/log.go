//go:build js && wasm

package main

import (
	"context"
	"log/slog"
	"strings"
	"syscall/js"
)

// The worker's log. Go's own stdout and stderr reach the isolate as
// console.log (wasm_exec.js), which wrangler shows at its "log" level only:
// `wrangler dev --log-level info` (or warn, error) drops every line of it,
// an internal error's included. So slog's records go to the console method of
// their level instead — console.error, console.warn, console.info,
// console.debug — which wrangler dev and `wrangler tail` show by that level;
// main installs it as slog's default (and so the log package's), and the
// worker logs through slog. The shim sends what Go writes to stderr itself
// (a panic's trace) to console.error.

// consoleHandler formats a record as slog's TextHandler does and writes it
// with the console method of its level: one TextHandler per level.
type consoleHandler [4]slog.Handler // debug, info, warn, error

func newConsoleHandler(opts *slog.HandlerOptions) consoleHandler {
	console := js.Global().Get("console")
	var h consoleHandler
	for i, method := range []string{"debug", "info", "warn", "error"} {
		h[i] = slog.NewTextHandler(consoleWriter{console, method}, opts)
	}
	return h
}

func (h consoleHandler) of(l slog.Level) slog.Handler {
	switch {
	case l >= slog.LevelError:
		return h[3]
	case l >= slog.LevelWarn:
		return h[2]
	case l >= slog.LevelInfo:
		return h[1]
	}
	return h[0]
}

func (h consoleHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.of(l).Enabled(ctx, l)
}

func (h consoleHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.of(r.Level).Handle(ctx, r)
}

func (h consoleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	for i := range h {
		h[i] = h[i].WithAttrs(attrs)
	}
	return h
}

func (h consoleHandler) WithGroup(name string) slog.Handler {
	for i := range h {
		h[i] = h[i].WithGroup(name)
	}
	return h
}

// consoleWriter writes each record (TextHandler writes one line at a time)
// with one console method.
type consoleWriter struct {
	console js.Value
	method  string
}

func (w consoleWriter) Write(p []byte) (int, error) {
	w.console.Call(w.method, strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
