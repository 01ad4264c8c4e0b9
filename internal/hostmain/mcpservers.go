package hostmain

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/connect"
	"github.com/rowcall/rowcall/internal/mcpimport"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

// DefaultMCPSyncEvery is how often the host checks every MCP server's tools
// by itself (--mcp-sync-every).
const DefaultMCPSyncEvery = 15 * time.Minute

// watchDrift starts the host's background drift checks (mcpimport.Watcher):
// each is api.Handler.CheckMCP (the sync `rowcall mcp sync SERVER` runs,
// accepting and rejecting nothing; the worker's Cron Trigger runs it too),
// for a server that sent notifications/tools/list_changed, and for every
// server every `every`.
func watchDrift(h *api.Handler, every time.Duration) *mcpimport.Watcher {
	w := mcpimport.NewWatcher(h.CheckMCP, h.MCPServers, every)
	w.OnError = func(server string, err error) {
		slog.Warn("mcp drift check failed; backing off", "server", server, "err", err)
	}
	return w
}

// stdioServers reads the operator's stdio MCP servers from the file
// ROWCALL_MCP_SERVERS names (the mcpServers JSON, mcpcall.ReadConfig); nil
// when unset: stdio rows are then refused. Only this file, which the
// operator writes, can make the host start a process (docs/security.md).
func stdioServers(lookup func(string) (string, bool)) (*mcpcall.Stdio, error) {
	path, _ := lookup("ROWCALL_MCP_SERVERS")
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ROWCALL_MCP_SERVERS: %w", err)
	}
	servers, err := mcpcall.ReadConfig(data)
	if err != nil {
		return nil, fmt.Errorf("ROWCALL_MCP_SERVERS %s: %w (the file is {\"mcpServers\": {\"NAME\": {\"command\": …, \"args\": […], \"env\": [\"VAR\", …]}}})", path, err)
	}
	return &mcpcall.Stdio{Servers: servers, Getenv: lookup}, nil
}

// connections reads the operator's connection providers from
// ROWCALL_CONNECTIONS (a file, or the JSON itself) and their sealing keys
// from ROWCALL_CONNECTIONS_KEY (connect.Load; the key alone serves the
// providers the host registers for MCP servers that need a sign-in); nil
// when both are unset: bearer:connection: rows are then refused
// (connections_off).
func connections(lookup func(string) (string, bool)) (*connect.Service, error) {
	value, _ := lookup("ROWCALL_CONNECTIONS")
	key, _ := lookup("ROWCALL_CONNECTIONS_KEY")
	return connect.Load(value, key, os.ReadFile, func(_ context.Context, name string) (string, bool) { return lookup(name) })
}
