package main

import (
	"cmp"
	"context"
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

	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/examplerows"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// serve implements `rowcall serve`: the platform a local host provides —
// the database, the owner and receipt keys, the process environment, the
// outbound transport checked at dial time, wazero's compiler with a deadline,
// the listener — handed to app.New, then served.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:8787", "listen address")
	dataDir := fs.String("data", "./data", "data directory (database, owner key, module cache)")
	dbURL := fs.String("db", "", dbFlagHelp)
	fs.Bool("public-reads", false, "let anyone read the directory without a credential")
	fs.String("public-url", "", "base URL of the links the host writes, e.g. public receipts (default: the listen address)")
	fs.Bool("trust-forwarded", false, "behind a proxy without --public-url: take links' scheme and host from X-Forwarded-Proto and X-Forwarded-Host")
	fs.String("audience", "rowcall", "this host's audience: tokens minted for another audience are refused")
	fs.Bool("no-examples", false, "do not install the example rows into a new database")
	fs.String("embed", "", `"off": do not embed rows (ask ranks by words alone); default: the embedded encoder, use-lite, whose weights are fetched once into DATA/models`)
	fs.String("allow-outbound", "", "comma-separated CIDRs, IP:port or CIDR:port entries ([::1]:9000 for IPv6) or host names http rows may reach although they are loopback, private or link-local (e.g. 127.0.0.1/32, 127.0.0.1:9000)")
	fs.String("secrets-prefix", "", "only environment variables starting with this prefix may be named in rows' auth (rowcall's own ROWCALL_* never may)")
	models, tune := agentFlags(fs)
	fnTimeout := fs.Duration("fn-timeout", fn.DefaultTimeout, "wall-clock limit of one fn module call")
	fnConcurrency := fs.Int("fn-concurrency", fn.DefaultMaxConcurrent(), "fn module calls running at once; one more waits up to 1s, then ERR:fn:busy")
	lim := limitFlags(fs)
	if err := envFlags(fs, serveSettings); err != nil {
		return err
	}
	fs.Parse(args)
	if err := lim.check(*fnTimeout); err != nil {
		return err
	}
	settings := settingsFrom(fs)
	if err := models(&settings.Models); err != nil {
		return err
	}
	startPprof()
	if os.Getenv("GOGC") == "" {
		// Per-call garbage is short-lived: collect less often, for less CPU.
		debug.SetGCPercent(400)
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
		defer checkpoints(db)() // runs before db.Close
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
	// fn modules: metadata and bytes in the same database (so hosts sharing a
	// libSQL database share modules), compiled code cached under the data dir.
	registry := modules.NewRegistry(db, modules.NewSQLBlobs(db))
	fnRunner, err := fn.New(ctx, registry, fn.Config{CacheDir: filepath.Join(*dataDir, "wasm-cache"), Timeout: *fnTimeout, MaxConcurrent: *fnConcurrency})
	if err != nil {
		return err
	}
	defer fnRunner.Close(context.Background())
	p := app.Platform{DB: db, Signer: signer, OwnerKeys: keys.Keys, Env: hostEnv(keys),
		Client: func(policy outbound.Policy, timeout time.Duration) *http.Client { return policy.Client(timeout) },
		Fn:     fnRunner, Modules: registry,
		Fresh: time.Millisecond, // another process's edit shows within 1 ms; this one's at once
		// On sqld a look at the event log is an HTTP round trip: fn calls
		// speculate instead (the receipt's INSERT checks it).
		Speculate: !embedded,
		ListenURL: base,
		// Rows reach this host's own API as $SELF (the public URL, else the
		// listen address), served in process.
		SelfBase: func(context.Context) string { return cmp.Or(strings.TrimRight(settings.PublicURL, "/"), base) },
		Agent:    tune,
		Embedder: embedder(ctx, settings, *dataDir),
	}
	if embedded {
		p.MaxParams = sqlite.MaxParams // group commits in few statements
	}
	// Rows may call this host's own API (as the seed's DIR_PATCH does), and
	// nothing else on loopback unless the operator allows it.
	if self, err := netip.ParseAddrPort(ln.Addr().String()); err == nil {
		p.AllowPorts = append(p.AllowPorts, outbound.Exact(self))
	}
	a, err := app.New(settings, p)
	if err != nil {
		return err
	}
	defer a.Close()
	go a.Run(ctx) // embeds rows after their writes
	if freshDatabase(applied) && !settings.NoExamples {
		created, err := examplerows.InstallAll(ctx, registry, a.Store)
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

	// MCP notification streams end first, or shutdown would wait on them.
	return lim.serve(ctx, a.Handler, ln, a.API.Close)
}
