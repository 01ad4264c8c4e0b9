package hostmain

import (
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/connect"
	"github.com/rowcall/rowcall/internal/mcpimport"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

// mcpSync is POST /api/mcp/sync's comparison (mcpimport.Sync).
func mcpSync(server string, stored []rowcall.Row, tools []*sdk.Tool, secrets []string, accept, reject func(string) bool) ([]rowcall.Row, any) {
	return mcpimport.Sync(server, stored, tools, secrets, accept, reject)
}

// mcpRows is POST /api/import/mcp's converter (mcpimport.Rows).
func mcpRows(server string, tools []*sdk.Tool, secrets []string, o api.MCPImportOptions) ([]rowcall.Row, []string) {
	return mcpimport.Rows(server, tools, secrets, mcpimport.Options{Prefix: o.Prefix, Category: o.Category, Auth: o.Auth})
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

// connections reads the operator's connection providers from the file
// ROWCALL_CONNECTIONS names (connect.ReadConfig) and their sealing keys from
// ROWCALL_CONNECTIONS_KEY; nil when unset: bearer:connection: rows are then
// refused (connections_off).
func connections(lookup func(string) (string, bool)) (*connect.Service, error) {
	path, _ := lookup("ROWCALL_CONNECTIONS")
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ROWCALL_CONNECTIONS: %w", err)
	}
	cfg, err := connect.ReadConfig(data)
	if err != nil {
		return nil, fmt.Errorf("ROWCALL_CONNECTIONS %s: %w (the file is {\"providers\": {\"NAME\": {\"discovery_url\": …, \"client_id\": …, \"client_secret_env\": \"VAR\", \"scopes\": […]}}})", path, err)
	}
	key, _ := lookup("ROWCALL_CONNECTIONS_KEY")
	keys, err := connect.ParseKeys(key)
	if err != nil {
		return nil, fmt.Errorf("ROWCALL_CONNECTIONS_KEY (the key that seals connections' tokens): %w", err)
	}
	return &connect.Service{Providers: cfg.Providers, Keys: keys, Secret: lookup}, nil
}
