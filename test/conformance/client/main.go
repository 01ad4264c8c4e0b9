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
// endpoint discovered from the server). Without those, a server that asks
// for a person's sign-in is imported as a host imports it (mcpimport.List:
// the client registers itself, RFC 7591, as a connection provider kept in
// a temporary database), the person signs in (signIn follows the
// authorization server's redirect, as the suite's reference client does,
// and the host's connect flow redeems the code), and the rows call the
// server with bearer:connection:NAME. It prints each result and exits 1
// on a failure. test/mcp_conformance_test.go (TestMCPConformanceClient)
// runs the suite with it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/connect"
	"github.com/rowcall/rowcall/internal/mcpimport"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/runners/mcpcall"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
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
	svc, closeStore, err := connections(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	ctx = rowcall.WithConnector(ctx, func(ctx context.Context, provider string) (string, *rowcall.Failure) {
		return svc.Token(ctx, rowcall.OwnerHolder, provider)
	})
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
	tools, _, auth, err := mcpimport.List(ctx, runner, svc, rowcall.OwnerHolder, server, auth, env)
	var need *rowcall.Error
	if errors.As(err, &need) && need.Code == rowcall.EConnectionRequired {
		fmt.Println("import: " + need.Error())
		link, _ := need.Extra["connect_url"].(string)
		if err := signIn(ctx, svc, link); err != nil {
			return fmt.Errorf("signing in at %s: %v", link, err)
		}
		tools, _, auth, err = mcpimport.List(ctx, runner, svc, rowcall.OwnerHolder, server, auth, env)
	}
	if err != nil {
		return fmt.Errorf("tools/list: %v", err)
	}
	fmt.Printf("tools/list: %d tools (auth %q)\n", len(tools), auth)
	if scenario == "initialize" || len(tools) == 0 {
		return nil
	}
	return call(&rowcall.Row{Key: tools[0].Name, Type: "http", Runner: "mcp", Target: "MCP " + server + "#" + tools[0].Name, Auth: auth}, nil)
}

// base is the public URL the client's host would have: the redirect URI it
// registers is base + /connect/callback, where signIn catches the
// authorization server's redirect.
const base = "http://127.0.0.1:8080"

// connections is the connections of a host: a store in a temporary SQLite
// database with rowcall's migrations, and a fresh sealing key.
func connections(ctx context.Context) (*connect.Service, func(), error) {
	dir, err := os.MkdirTemp("", "rowcall-conformance-")
	if err != nil {
		return nil, nil, err
	}
	db, err := sqlite.Open(filepath.Join(dir, "rowcall.db"))
	if err == nil {
		_, err = migrations.Apply(ctx, db)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	keys, err := connect.ParseKeys("k1:" + base64.StdEncoding.EncodeToString(key))
	if err != nil {
		return nil, nil, err
	}
	store := sqlstore.New(db)
	svc := &connect.Service{Providers: map[string]*connect.Provider{}, Keys: keys, Store: store, Registry: store, Client: &http.Client{},
		Base: func(context.Context) string { return base }}
	return svc, func() { db.Close(); os.RemoveAll(dir) }, nil
}

// signIn is the person who opens the connect link: the host's Begin (what
// the link's page posts to) sends them to the authorization server, which
// (in the suite, as for a person who already consented) redirects at once
// to the host's callback with a code, which the host's Finish redeems.
func signIn(ctx context.Context, svc *connect.Service, link string) error {
	u, err := url.Parse(link)
	if err != nil {
		return err
	}
	to, err := svc.Begin(ctx, u.Query().Get("c"))
	if err != nil {
		return err
	}
	person := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), base+connect.CallbackPath) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, to, nil)
	res, err := person.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	back, err := res.Location()
	if err != nil || !strings.HasPrefix(back.String(), base+connect.CallbackPath) {
		return fmt.Errorf("the authorization server answered %d, not a redirect to the callback", res.StatusCode)
	}
	if e := back.Query().Get("error"); e != "" {
		return fmt.Errorf("the authorization server answered %s: %s", e, back.Query().Get("error_description"))
	}
	_, _, err = svc.Finish(ctx, back.Query())
	return err
}
