package main

import (
	"cmp"
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
	"github.com/rowcall/rowcall/internal/directory"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/examplerows"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/runners/flow"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/runners/httpcall"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// hostEnv is where rows' credentials come from: the process environment, plus
// ROWCALL_OWNER_KEY (the owner key, so example rows can call this host's own
// API, as the seed's DIR_PATCH does), as rowcall.SecretsEnv lets rows see it:
// none of rowcall's own variables, and with a prefix only that namespace.
func hostEnv(keys *keyRing, prefix string) rowcall.Env {
	return rowcall.SecretsEnv(rowcall.EnvFunc(func(name string) (string, bool) {
		if name == rowcall.OwnerEnv {
			return keys.Current(), true
		}
		return os.LookupEnv(name)
	}), prefix)
}

// serve implements `rowcall serve`.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:8787", "listen address")
	dataDir := fs.String("data", "./data", "data directory (database, owner key, module cache)")
	dbURL := fs.String("db", "", dbFlagHelp)
	publicReads := fs.Bool("public-reads", false, "let anyone read the directory without a credential")
	publicURL := fs.String("public-url", "", "base URL of the links the host writes, e.g. public receipts (default: the listen address)")
	trustForwarded := fs.Bool("trust-forwarded", false, "behind a proxy without --public-url: take links' scheme and host from X-Forwarded-Proto and X-Forwarded-Host")
	audience := fs.String("audience", "rowcall", "this host's audience: tokens minted for another audience are refused")
	noExamples := fs.Bool("no-examples", false, "do not install the example rows into a new database")
	allow := fs.String("allow-outbound", "", "comma-separated CIDRs, IP:port or CIDR:port entries ([::1]:9000 for IPv6) or host names http rows may reach although they are loopback, private or link-local (e.g. 127.0.0.1/32, 127.0.0.1:9000)")
	newAgent := agentFlags(fs)
	fnTimeout := fs.Duration("fn-timeout", fn.DefaultTimeout, "wall-clock limit of one fn module call")
	fnConcurrency := fs.Int("fn-concurrency", fn.DefaultMaxConcurrent(), "fn module calls running at once; one more waits up to 1s, then ERR:fn:busy")
	secretsPrefix := fs.String("secrets-prefix", "", "only environment variables starting with this prefix may be named in rows' auth (rowcall's own ROWCALL_* never may)")
	lim := limitFlags(fs)
	if err := envFlags(fs, serveSettings); err != nil {
		return err
	}
	fs.Parse(args)
	if err := lim.check(*fnTimeout); err != nil {
		return err
	}
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
	// Rows reach this host's own API as $SELF (the public URL, else the listen
	// address), served in-process by the API handler (set below).
	self := &outbound.Self{Base: func(context.Context) string { return cmp.Or(strings.TrimRight(*publicURL, "/"), base) }}
	// Rows may call this host's own API (as the seed's DIR_PATCH does), and
	// nothing else on loopback unless the operator allows it.
	if self, err := netip.ParseAddrPort(ln.Addr().String()); err == nil {
		policy.AllowPorts = append(policy.AllowPorts, outbound.Exact(self))
	}
	store := sqlstore.New(db)
	if embedded {
		store.MaxParams = sqlite.MaxParams // group commits in few statements
	}
	dir := directory.New(store, *secretsPrefix) // the write path: its rules, and a notice to the dispatcher
	receipts := sqlstore.NewReceiptLog(store, signer)
	defer receipts.Close()
	disp := &dispatch.Dispatcher{
		Store:    store,
		Env:      hostEnv(keys, *secretsPrefix),
		Receipts: receipts,
		Fresh:    time.Millisecond, // another process's edit shows within 1 ms; this one's at once
		// On sqld a look at the event log is an HTTP round trip: fn calls
		// speculate instead (the receipt's INSERT checks it).
		Speculate: !embedded,
		Audience:  *audience,
		Runners: map[rowcall.Type]rowcall.Runner{
			rowcall.TypeHTTP: httpcall.New(httpcall.Config{Client: self.Client(policy.Client(httpcall.DefaultTimeout)), Self: self.Base}),
			rowcall.TypeFlow: flow.Runner{},
		},
	}
	dir.Subscribe(disp.Touch)
	if disp.Runners[rowcall.TypeAgent], err = newAgent(policy, store); err != nil {
		return err
	}
	// fn modules: metadata and bytes in the same database (so hosts sharing a
	// libSQL database share modules), compiled code cached under the data dir.
	registry := modules.NewRegistry(db, modules.NewSQLBlobs(db))
	fnRunner, err := fn.New(ctx, registry, fn.Config{CacheDir: filepath.Join(*dataDir, "wasm-cache"), Timeout: *fnTimeout, MaxConcurrent: *fnConcurrency})
	if err != nil {
		return err
	}
	defer fnRunner.Close(context.Background())
	disp.Runners[rowcall.TypeFn], disp.Modules = fnRunner, fnRunner
	h := api.New(api.Config{OwnerKeys: keys.Keys, ReceiptKeys: []ledger.PublicKey{signer.Public()},
		Signer: signer, PublicReads: *publicReads, PublicURL: *publicURL, TrustForwarded: *trustForwarded,
		// Links name the configured public URL, else this host's listen address:
		// a request's Host and X-Forwarded-* are the client's to choose, unless a
		// trusted proxy in front sets them.
		ListenURL: base, Modules: registry}, dir, store, disp)
	self.Handler = h
	if freshDatabase(applied) && !*noExamples {
		created, err := examplerows.InstallAll(ctx, registry, store)
		if err != nil {
			return err
		}
		fmt.Printf("Example rows ready to call: %s (try: go run ./host call DIR_GET DIR_PATCH)\n", strings.Join(created, ", "))
	}
	if created {
		fmt.Printf("A new owner key was written to %s/owner.key (mode 0600). Use it as:\n"+
			"  export ROWCALL_OWNER_KEY=$(cat %s/owner.key) ROWCALL_URL=%s\n"+
			"  curl -H \"x-terminal-key: $ROWCALL_OWNER_KEY\" $ROWCALL_URL/api/directory\n",
			*dataDir, *dataDir, base)
	}
	fmt.Printf("rowcall serving %s (database %s)\n", base, where)

	srv, limited := lim.server(h, ln)
	srv.RegisterOnShutdown(h.Close) // end MCP notification streams, or shutdown waits on them
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(limited) }()
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
