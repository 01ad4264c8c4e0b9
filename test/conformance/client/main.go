// Command client is rowcall's MCP client side (runners/mcpcall, the runner
// of rows whose runner is "mcp") as the official MCP conformance suite
// drives a client under test: the suite starts its server, then runs
//
//	client <server URL>
//
// with MCP_CONFORMANCE_SCENARIO naming the scenario and, for scenarios that
// hand the client a credential, MCP_CONFORMANCE_CONTEXT holding it as JSON.
// The client makes the rows a user would write for that server and calls
// them through the runner: "initialize" lists the tools (an import's
// tools/list); "tools_call" calls add_numbers with its two arguments by the
// named-arguments rule; every other scenario lists the tools and calls the
// first one with no arguments, under an oauth: auth column without
// token_url when the context gives client_id and client_secret, or
// client_id and private_key_pem with its signing_algorithm (the token
// endpoint discovered from the server). It prints each result and exits 1
// on a failure. test/mcp_conformance_test.go (TestMCPConformanceClient)
// runs the suite with it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/mcpcall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client <MCP server URL> (MCP_CONFORMANCE_SCENARIO names the scenario)")
		os.Exit(2)
	}
	if err := run(os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(server, scenario, conformanceContext string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	var given struct {
		ClientID      string `json:"client_id"`
		ClientSecret  string `json:"client_secret"`
		PrivateKeyPEM string `json:"private_key_pem"`
		Alg           string `json:"signing_algorithm"`
	}
	if conformanceContext != "" {
		if err := json.Unmarshal([]byte(conformanceContext), &given); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	vars := map[string]string{"CONFORMANCE_CLIENT_ID": given.ClientID, "CONFORMANCE_CLIENT_SECRET": given.ClientSecret,
		"CONFORMANCE_CLIENT_KEY": given.PrivateKeyPEM}
	env := rowcall.EnvFunc(func(name string) (string, bool) { v, ok := vars[name]; return v, ok })
	auth := ""
	switch {
	case given.ClientID != "" && given.ClientSecret != "":
		auth = `oauth:{"client_id":"$CONFORMANCE_CLIENT_ID","client_secret":"$CONFORMANCE_CLIENT_SECRET"}`
	case given.ClientID != "" && given.PrivateKeyPEM != "":
		auth = `oauth:{"client_id":"$CONFORMANCE_CLIENT_ID","private_key":"$CONFORMANCE_CLIENT_KEY","alg":"` + given.Alg + `"}`
	}
	runner := mcpcall.New(mcpcall.Config{})
	defer runner.Close()
	call := func(row *rowcall.Row, args []string) error {
		out := runner.Run(ctx, &rowcall.Invocation{Row: row, Args: args, Env: env})
		fmt.Println(row.Key + ": " + out.Result)
		if out.Failed() {
			return fmt.Errorf("%s failed: %s", row.Key, out.Result)
		}
		return nil
	}
	if scenario == "tools_call" {
		return call(&rowcall.Row{Key: "add_numbers", Type: "http", Runner: "mcp", Target: "MCP " + server + "#add_numbers", Auth: auth,
			InputSchema: `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`}, []string{"2", "3"})
	}
	tools, _, err := runner.ListTools(ctx, server, auth, env)
	if err != nil {
		return fmt.Errorf("tools/list: %v", err)
	}
	fmt.Printf("tools/list: %d tools\n", len(tools))
	if scenario == "initialize" || len(tools) == 0 {
		return nil
	}
	return call(&rowcall.Row{Key: tools[0].Name, Type: "http", Runner: "mcp", Target: "MCP " + server + "#" + tools[0].Name, Auth: auth}, nil)
}
