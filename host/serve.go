package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/dispatch"
	"github.com/rowcall/rowcall/examples"
	"github.com/rowcall/rowcall/ledger"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/modules"
	"github.com/rowcall/rowcall/outbound"
	"github.com/rowcall/rowcall/runners/flow"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/httpcall"
	"github.com/rowcall/rowcall/sqlite"
	"github.com/rowcall/rowcall/sqlstore"
)

// hostEnv is where rows' credentials come from: the process environment, plus
// ROWCALL_OWNER_KEY (the owner key, so example rows can call this host's own
// API, as the seed's DIR_PATCH does).
func hostEnv(keys *keyRing) rowcall.Env {
	return rowcall.EnvFunc(func(name string) (string, bool) {
		if name == rowcall.OwnerEnv {
			return keys.Current(), true
		}
		return os.LookupEnv(name)
	})
}

// serve implements `rowcall serve`.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:8787", "listen address")
	dataDir := fs.String("data", "./data", "data directory (database, owner key, module cache)")
	dbURL := fs.String("db", "", dbFlagHelp)
	publicReads := fs.Bool("public-reads", false, "let anyone read the directory without a credential")
	publicURL := fs.String("public-url", "", "base URL for public receipt links (default: the request's host)")
	audience := fs.String("audience", "rowcall", "this host's audience: tokens minted for another audience are refused")
	noExamples := fs.Bool("no-examples", false, "do not install the example rows into a new database")
	allow := fs.String("allow-outbound", "", "comma-separated CIDRs or host names http rows may reach although they are loopback, private or link-local (e.g. 127.0.0.1/32)")
	newAgent := agentFlags(fs)
	fnTimeout := fs.Duration("fn-timeout", fn.DefaultTimeout, "wall-clock limit of one fn module call")
	if err := envFlags(fs, serveSettings); err != nil {
		return err
	}
	fs.Parse(args)
	startPprof()
	if os.Getenv("GOGC") == "" {
		// Per-call garbage is short-lived: collect less often, for less CPU.
		debug.SetGCPercent(400)
	}
	policy, err := outbound.Parse(*allow)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	db, applied, where, err := openDatabase(ctx, *dataDir, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, n := range applied {
		slog.Info("migration applied", "name", n)
	}
	embedded := *dbURL == ""
	if embedded {
		ckpt, stopCkpt := context.WithCancel(context.Background())
		done := make(chan struct{})
		// Small checkpoints often: one a second under load copied ~10 MB of WAL
		// at once and showed in the callers' p99 (docs/benchmarks.md).
		go func() { sqlite.Checkpointer(ckpt, db, 100*time.Millisecond); close(done) }()
		defer func() { stopCkpt(); <-done }() // runs before db.Close
	}
	created, err := ensureOwnerKey(*dataDir)
	if err != nil {
		return err
	}
	keys := newKeyRing(*dataDir)
	signer, err := receiptSigner(*dataDir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	// Rows may call this host's own API (as the seed's DIR_PATCH does), and
	// nothing else on loopback unless the operator allows it.
	if self, err := netip.ParseAddrPort(ln.Addr().String()); err == nil {
		policy.AllowAddrs = append(policy.AllowAddrs, self)
	}
	store := sqlstore.New(db)
	if embedded {
		store.MaxParams = sqlite.MaxParams // group commits in few statements
	}
	receipts := sqlstore.NewReceiptLog(store, signer)
	defer receipts.Close()
	disp := &dispatch.Dispatcher{
		Store:    store,
		Env:      hostEnv(keys),
		Receipts: receipts,
		Fresh:    time.Millisecond, // another process's edit shows within 1 ms; this one's at once
		// On sqld a look at the event log is an HTTP round trip: fn calls
		// speculate instead (the receipt's INSERT checks it).
		Speculate: !embedded,
		Audience:  *audience,
		Runners: map[rowcall.Type]rowcall.Runner{
			rowcall.TypeHTTP: httpcall.New(httpcall.Config{Client: policy.Client(httpcall.DefaultTimeout)}),
			rowcall.TypeFlow: flow.Runner{},
		},
	}
	if disp.Runners[rowcall.TypeAgent], err = newAgent(policy, store); err != nil {
		return err
	}
	// fn modules: metadata and bytes in the same database (so hosts sharing a
	// libSQL database share modules), compiled code cached under the data dir.
	registry := modules.NewRegistry(db, modules.NewSQLBlobs(db))
	fnRunner, err := fn.New(ctx, registry, fn.Config{CacheDir: filepath.Join(*dataDir, "wasm-cache"), Timeout: *fnTimeout})
	if err != nil {
		return err
	}
	defer fnRunner.Close(context.Background())
	disp.Runners[rowcall.TypeFn], disp.Modules = fnRunner, fnRunner
	h := api.New(api.Config{OwnerKeys: keys.Keys, ReceiptKeys: []ledger.PublicKey{signer.Public()},
		PublicReads: *publicReads, PublicURL: *publicURL, Modules: registry}, store, disp)
	if freshDatabase(applied) && !*noExamples {
		created, err := examples.Install(ctx, store, examples.HTTPRows(base))
		if err != nil {
			return err
		}
		fnRows, err := examples.InstallModules(ctx, registry, store)
		if err != nil {
			return err
		}
		created = append(created, fnRows...)
		fmt.Printf("Example rows ready to call: %s (try: go run ./host call DIR_GET DIR_PATCH)\n", strings.Join(created, ", "))
	}
	if created {
		fmt.Printf("A new owner key was written to %s/owner.key (mode 0600). Use it as:\n"+
			"  export ROWCALL_OWNER_KEY=$(cat %s/owner.key) ROWCALL_URL=%s\n"+
			"  curl -H \"x-terminal-key: $ROWCALL_OWNER_KEY\" $ROWCALL_URL/api/directory\n",
			*dataDir, *dataDir, base)
	}
	fmt.Printf("rowcall serving %s (database %s)\n", base, where)

	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(h.Close) // end MCP notification streams, or shutdown waits on them
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.Info("shutting down: finishing requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// freshDatabase reports whether this start created the database (it applied the
// first migration), which is when the example rows are installed.
func freshDatabase(applied []string) bool {
	return len(applied) > 0 && applied[0] == migrations.Names()[0]
}
