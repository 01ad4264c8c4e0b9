//go:build js && wasm

package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"syscall/js"
	"time"
)

// The Worker's Cron Triggers (wrangler.toml's [triggers] crons).
//
// The shim's scheduled handler calls binding.scheduled(cron, env, ctx, done)
// once per event, with the event's own env and ExecutionContext, and keeps
// the event's context open until Go answers done(null), or done(message)
// when the check failed. Every event runs the drift check of every MCP server
// the rows call: the check the local host runs every --mcp-sync-every
// (api.Handler.CheckMCP). What it finds is kept where the host keeps it: a
// changed tool's row is marked drifted in D1 (and held: its calls are
// refused with definition_changed until the owner accepts or rejects the
// change), and each server's outcome in the instance's MCPSyncStatuses
// (the rows' mcp_sync in GET /api/directory/KEY, for the owner).
func registerScheduled(inst *instance) {
	scheduled := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 4 {
			panic("scheduled(cron, env, ctx, done): wrong number of arguments")
		}
		cron, done := args[0].String(), args[3]
		h := inflight.begin(args[1], args[2])
		workers.do(func() {
			err := inst.scheduled(h, cron)
			inflight.end(h)
			if err != nil {
				done.Invoke("rowcall: " + err.Error())
				return
			}
			done.Invoke(js.Null())
		})
		return nil
	})
	runtimeContext.Get("binding").Set("scheduled", scheduled)
}

// scheduled runs one Cron Trigger's event, h being its handle. A panic fails
// the event and leaves the instance serving.
func (inst *instance) scheduled(h *reqHandle, cron string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("rowcall: panic in a scheduled event", "cron", cron, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	a := inst.appFor(h)
	if a.api == nil {
		return a.broken
	}
	ctx, cancel := context.WithCancel(withHandle(context.Background(), h))
	h.cancel = cancel
	defer cancel()
	start := time.Now()
	err = a.api.CheckMCP(ctx, "")
	took := time.Since(start).Round(time.Millisecond)
	if err != nil {
		slog.Warn("rowcall: scheduled mcp drift check failed", "cron", cron, "took", took, "err", err)
		return err
	}
	slog.Info("rowcall: scheduled mcp drift check", "cron", cron, "took", took)
	return nil
}
