package hostmain

import (
	"fmt"
	"os"

	"github.com/rowcall/rowcall/runners/mcpcall"
)

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
