// Package hostmain is the local host's program, `rowcall serve`, as a Main
// that the rowcall binary (host/) and the tests boot the same way:
//
//	m := hostmain.NewMain()
//	m.LookupEnv = env                     // optional: os.LookupEnv by default
//	if err := m.ParseFlags(ctx, args); err != nil { … } // serve's flags and ROWCALL_* settings
//	if err := m.Run(ctx); err != nil { m.Close(); … }   // listening and serving once it returns
//	fmt.Println(m.URL())                  // http://127.0.0.1:PORT
//	…
//	err := m.Close()                      // stops serving, flushes receipts, closes the database
//
// Run builds the platform a local host provides — the database (the embedded
// SQLite file under --data, or a libSQL server: --db), the owner and receipt
// keys, the environment as rows' credentials, the outbound transport checked
// at dial time, wazero's compiler with a deadline, the listener — hands it to
// app.New, and serves App.Handler within the connection limits. Everything the
// process owns (signals, the profiler, the garbage collector's pace, exit
// codes) stays in host/.
package hostmain

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api/mcp"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/envflag"
	"github.com/rowcall/rowcall/internal/examplerows"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/mcpimport"
	"github.com/rowcall/rowcall/internal/openapi"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/runners/agent"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// Main is one local host: configured by ParseFlags, started by Run, stopped
// by Close.
type Main struct {
	// LookupEnv reads the environment: ROWCALL_* settings and the credentials
	// rows name (os.LookupEnv when nil). Set it before ParseFlags.
	LookupEnv func(name string) (string, bool)
	// Stdout receives the messages for the operator (os.Stdout when nil):
	// the new owner key, the example rows, "rowcall serving URL (database …)".
	Stdout io.Writer

	// What ParseFlags read.
	Addr, DataDir, DBURL string
	Pprof                string // the profiler's listen address ("": none)
	MetricsAddr          string // keyless /metrics on its own listener ("": the API's /metrics only, for the owner)
	Settings             app.Settings
	// Tenants serves a directory per tenant (--tenants, tenants.go), at
	// most tenantsOpen open at once.
	Tenants        bool
	tenantsOpen    int
	tenantsDBAdmin string // sqld's admin API, where tenants' namespaces are made (--db with {tenant})
	fnConfig       fn.Config
	mcpSyncEvery   time.Duration
	fs             *flag.FlagSet
	limits         *limits
	prices         func(*agent.Settings) error
	tune           func(*agent.Config)

	// App is the assembled core, once Run has returned.
	App *app.App

	ln      net.Listener
	srv     *http.Server
	served  chan error     // Serve's end
	closers []func() error // run by Close, last first
	archive struct {
		dir, auth     string
		size          int
		retain, every time.Duration
	}
}

// NewMain returns a Main that reads the process environment.
func NewMain() *Main { return &Main{} }

func (m *Main) lookup(name string) (string, bool) {
	if m.LookupEnv == nil {
		return os.LookupEnv(name)
	}
	return m.LookupEnv(name)
}

func (m *Main) stdout() io.Writer { return cmp.Or[io.Writer](m.Stdout, os.Stdout) }

// Flags registers serve's flags on fs, bound to m: ParseFlags parses them,
// and a command line lists them (internal/cli's help and completion).
func (m *Main) Flags(fs *flag.FlagSet) {
	m.fs = fs
	fs.StringVar(&m.Addr, "addr", "127.0.0.1:8787", "listen address")
	fs.StringVar(&m.Pprof, "pprof", "", "serve Go's profiler on this address too (e.g. 127.0.0.1:6060), on its own listener, never on the API's")
	fs.StringVar(&m.DataDir, "data", "./data", "data directory (database, owner key, module cache)")
	fs.StringVar(&m.DBURL, "db", "", DBFlagHelp)
	fs.Bool("public-reads", false, "let anyone read the directory without a credential")
	fs.String("public-url", "", "base URL of the links the host writes, e.g. public receipts (default: the listen address)")
	fs.Bool("trust-forwarded", false, "behind a proxy without --public-url: take links' scheme and host from X-Forwarded-Proto and X-Forwarded-Host")
	fs.String("mcp-origins", "", "web origins (scheme://host[:port], separated by commas) whose pages may call /mcp besides loopback and --public-url; a request with another Origin is refused 403")
	fs.Int("mcp-tools", mcp.DefaultMaxTools, "most rows /mcp lists as tools in tools/list, beside search_capabilities and call_capability (0: none); tools/call reaches every row the caller may see, listed or not")
	fs.Duration("mcp-idle", mcp.DefaultIdle, "close an MCP session that sent no request for this long (its client initializes again)")
	fs.Int("mcp-sessions", mcp.DefaultMaxSessions, "most MCP sessions open at once; past it an initialize closes the least recently used idle one, else is refused 429")
	fs.Int("mcp-sessions-per-credential", mcp.DefaultSessionsPerCredential, "most MCP sessions open at once for the owner key or one token (as --mcp-sessions)")
	fs.DurationVar(&m.mcpSyncEvery, "mcp-sync-every", DefaultMCPSyncEvery, "compare the tools of every MCP server rows call with their rows this often, as rowcall mcp sync does (drift is marked, never accepted); 0: only when a server sends tools/list_changed")
	fs.String("mcp-drift", "hold", "what a row does once its MCP server changed the tool, until the owner accepts or rejects the change: hold (every call is refused with definition_changed) or warn (it stays callable, marked drifted)")
	fs.String("audience", "rowcall", "this host's audience: tokens minted for another audience are refused")
	fs.Bool("no-examples", false, "do not install the example rows into a new database")
	fs.String("allow-outbound", "", "comma-separated CIDRs, IP:port or CIDR:port entries ([::1]:9000 for IPv6) or host names http rows may reach although they are loopback, private or link-local (e.g. 127.0.0.1/32, 127.0.0.1:9000)")
	fs.String("embed-provider", "", `what embeds rows for ask: use-lite (the default: the embedded encoder, whose weights are fetched once into DATA/models), off (words alone), or the name of a --model-provider serving /v1/embeddings (its model in $ROWCALL_EMBED_MODEL)`)
	fs.String("ask-rerank-anonymous", "", "with ROWCALL_ASK_RERANK: rerank anonymous callers' asks too (public reads), all of them sharing this rate, e.g. 10/minute (\"\": anonymous asks are not reranked; the owner's are, and a token's are charged to the token)")
	fs.String("ask-learn", "", "whose asks and calls teach ask (a question asked, then a match called, becomes a phrase of that row): owner,tokens (the default: the owner and tokens minted with teach), owner, tokens, or off")
	fs.String("oidc-issuer", "", "the OpenID provider people sign in with, by its issuer (its discovery URL without /.well-known/openid-configuration); with it, GET /login signs a person in (docs/people.md)")
	fs.String("oidc-client-id", "", "rowcall's client id at the OpenID provider (registered with the redirect URI BASE/login/callback)")
	fs.String("oidc-client-secret", "", "rowcall's client secret at the OpenID provider (better given as $ROWCALL_OIDC_CLIENT_SECRET, which no process listing shows)")
	fs.String("oidc-roles", "", "the provider's groups mapped to roles, group=role separated by commas (e.g. tools-admins=admin,tools-editors=editor); roles: owner, admin, editor, approver, caller, viewer")
	fs.String("oidc-name", "", "the provider's name on the console's sign-in button (default: the issuer's host)")
	fs.String("oidc-groups-claim", "groups", "the ID token claim that lists a person's groups")
	fs.String("oidc-scopes", "", "scopes to ask the provider for besides openid email profile (e.g. groups), separated by spaces or commas")
	fs.Bool("owner-key-loopback-only", false, "accept the owner key only from a loopback address: the break-glass key of a host whose people sign in, usable on the machine alone")
	fs.String("scim-token", "", "turn on SCIM 2.0 provisioning at /scim/v2 for the identity provider, which sends this bearer token (at least 32 characters; prefer $ROWCALL_SCIM_TOKEN, which other users cannot see in the process list); people it creates are bound to $ROWCALL_OIDC_ISSUER")
	fs.String("secrets-prefix", "", "only environment variables starting with this prefix may be named in rows' auth (rowcall's own ROWCALL_* never may)")
	m.prices, m.tune = agentFlags(fs)
	fs.DurationVar(&m.fnConfig.Timeout, "fn-timeout", fn.DefaultTimeout, "wall-clock limit of one fn module call")
	fs.IntVar(&m.fnConfig.MaxConcurrent, "fn-concurrency", fn.DefaultMaxConcurrent(), "fn module calls running at once; one more waits up to 1s, then ERR:fn:busy")
	m.limits = limitFlags(fs)
	fs.StringVar(&m.archive.dir, "receipt-archive", "", "seal the receipt chain into segments in object storage, keeping only the retention window in the database (\"\": keep every receipt in the database); "+ArchiveHelp)
	fs.StringVar(&m.archive.auth, "receipt-archive-auth", DefaultArchiveAuth, ArchiveAuthHelp)
	fs.IntVar(&m.archive.size, "receipt-segment", sqlstore.DefaultSegmentSize, "receipts per sealed segment (with --receipt-archive)")
	fs.DurationVar(&m.archive.retain, "receipt-retain", 30*24*time.Hour, "how long sealed receipts stay in the database too (with --receipt-archive; 0: only the newest)")
	fs.DurationVar(&m.archive.every, "receipt-seal-every", time.Minute, "how often full segments are sealed and old receipts pruned (with --receipt-archive)")
	fs.BoolVar(&m.Tenants, "tenants", false, "serve a directory per tenant, each under /t/NAME/ with its own database, keys and receipt chain under DATA/tenants/NAME; the operator creates and lists them at /operator/tenants with $ROWCALL_OPERATOR_KEY (else DATA/operator.key) (docs/tenants.md)")
	fs.StringVar(&m.tenantsDBAdmin, "tenants-db-admin", "", "with --tenants and --db 'http://{tenant}.HOST:PORT': sqld's admin API (its --admin-listen-addr, e.g. http://127.0.0.1:9090), where each tenant's namespace is created and deleted")
	fs.IntVar(&m.tenantsOpen, "tenants-open", DefaultTenantsOpen, "with --tenants: most tenants open at once (each holds its database and runners); past it the least recently used idle one is closed")
	fs.StringVar(&m.MetricsAddr, "metrics-addr", "", "also serve Prometheus metrics at /metrics on this address, without a key (e.g. 127.0.0.1:9464); the API's /metrics takes the owner key")
}

// ParseFlags reads serve's flags from args, and each flag not given from its
// ROWCALL_* variable (envflag), read with LookupEnv. --help gives
// flag.ErrHelp.
func (m *Main) ParseFlags(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the command line prints serve's usage
	m.Flags(fs)
	pos, err := envflag.Parse(fs, args, m.lookup)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("serve takes no arguments, only flags: %q", pos)
	}
	if err := m.limits.check(m.fnConfig.Timeout); err != nil {
		return err
	}
	m.Settings = settingsFrom(m.fs, m.lookup)
	return m.prices(&m.Settings.Models)
}

// FlagSet is the flags ParseFlags parsed (nil before).
func (m *Main) FlagSet() *flag.FlagSet { return m.fs }

// Run opens the database (migrating it), assembles the core and starts
// serving on Addr; it returns once the host answers requests (URL says
// where). With --tenants it serves the tenants (tenants.go) instead of one
// directory. On an error, Close releases what Run had opened.
func (m *Main) Run(ctx context.Context) error {
	if m.Tenants {
		if err := m.checkTenants(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", m.Addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w: another process is listening on %s (a rowcall host already running?): stop it, or start this one on another address with --addr", err, m.Addr)
	}
	if err != nil {
		return err
	}
	m.ln = ln
	m.closers = append(m.closers, func() error {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	})
	base := m.URL()
	var handler http.Handler
	var shutdown func()
	where := ""
	if m.Tenants {
		ts, err := m.serveTenants(ctx, base)
		if err != nil {
			return err
		}
		m.closers = append(m.closers, ts.Close)
		handler, shutdown, where = ts, ts.CloseStreams, filepath.Join(m.DataDir, "tenants")+" (a database per tenant)"
	} else {
		d, err := m.open(ctx, m.DataDir, m.DBURL, base, m.lookup, embedder(ctx, m.Settings, m.DataDir), true)
		if err != nil {
			return err
		}
		m.closers = append(m.closers, d.Close)
		a := d.App
		m.App = a
		if err := m.startArchive(d); err != nil {
			return err
		}
		h, stopObserving, err := m.observe(ctx, a, d.Fn)
		if err != nil {
			return err
		}
		m.closers = append(m.closers, stopObserving)
		handler, shutdown, where = h, a.API.Close, d.Where
	}
	if m.Pprof != "" {
		if err := m.servePprof(); err != nil {
			return err
		}
	}
	srv, limited := m.limits.server(handler, ln)
	// MCP notification streams end first, or shutdown would wait on them.
	srv.RegisterOnShutdown(shutdown)
	m.srv, m.served = srv, make(chan error, 1)
	go func() { m.served <- srv.Serve(limited) }()
	fmt.Fprintf(m.stdout(), "rowcall serving %s (database %s)\n", base, where)
	return nil
}

// directory is one directory's assembled core over its own data: the host
// serves one, or with --tenants one per tenant.
type directory struct {
	App     *app.App
	Fn      *fn.Runner
	Signer  *ledger.Signer
	Where   string // the database, for messages
	closers []func() error
}

// Close stops the directory's background work, flushes its receipts and
// closes its database.
func (d *directory) Close() error {
	var errs []error
	for i := len(d.closers) - 1; i >= 0; i-- {
		errs = append(errs, d.closers[i]())
	}
	d.closers = nil
	return errors.Join(errs...)
}

// open assembles the directory whose data (database unless dbURL names a
// libSQL server, owner and receipt keys, compiled modules) is under dataDir,
// served at base. lookup is the environment it sees: the owner and receipt
// keys' variables, rows' credentials, stdio MCP servers and connections'
// providers (a tenant sees none). host says this is the host's own
// directory: it tells the operator of a new owner key and of the example
// rows. On an error, what open had opened is closed.
func (m *Main) open(ctx context.Context, dataDir, dbURL, base string, lookup func(string) (string, bool), emb rowcall.Embedder, host bool) (d *directory, err error) {
	built := &directory{}
	defer func() {
		if err != nil {
			built.Close() // what was opened before the error
		}
	}()
	d = built
	db, applied, where, err := openDatabase(ctx, dataDir, dbURL)
	if err != nil {
		return nil, err
	}
	d.Where = where
	d.closers = append(d.closers, db.Close)
	for _, n := range applied {
		slog.Info("migration applied", "name", n, "data", dataDir)
	}
	embedded := dbURL == ""
	if embedded {
		stop := checkpoints(db) // stops before db.Close
		d.closers = append(d.closers, func() error { stop(); return nil })
	}
	envKey, _ := lookup("ROWCALL_OWNER_KEY")
	created, err := ensureOwnerKey(dataDir, envKey)
	if err != nil {
		return nil, err
	}
	keys := newKeyRing(dataDir, envKey)
	receiptKey, _ := lookup("ROWCALL_RECEIPT_KEY")
	if d.Signer, err = receiptSigner(dataDir, receiptKey); err != nil {
		return nil, err
	}
	// fn modules: metadata and bytes in the same database (so hosts sharing a
	// libSQL database share modules), compiled code cached under the data dir.
	registry := modules.NewRegistry(db, modules.NewSQLBlobs(db))
	cfg := m.fnConfig
	cfg.CacheDir = filepath.Join(dataDir, "wasm-cache")
	if d.Fn, err = fn.New(ctx, registry, cfg); err != nil {
		return nil, err
	}
	fnRunner := d.Fn
	d.closers = append(d.closers, func() error { return fnRunner.Close(context.Background()) })
	s := m.Settings
	if !host && s.PublicURL != "" { // a tenant's links are under its path
		s.PublicURL = strings.TrimRight(s.PublicURL, "/") + strings.TrimPrefix(base, m.URL())
	}
	p := app.Platform{DB: db, Signer: d.Signer, OwnerKeys: keys.Keys, Env: hostEnv(keys, lookup),
		Client: func(policy outbound.Policy, timeout time.Duration) *http.Client { return policy.Client(timeout) },
		Fn:     fnRunner, Modules: registry,
		OpenAPI: openapi.Import,   // the worker leaves it out: kin-openapi would add 1.45 MB to its binary
		Fresh:   time.Millisecond, // another process's edit shows within 1 ms; this one's at once
		// fn calls speculate instead of looking at the event log once Fresh
		// has passed (the receipt's INSERT checks it): on sqld a look is an
		// HTTP round trip, and on SQLite the calls that find it due would
		// all wait for the one that looks.
		Speculate: true,
		ListenURL: base,
		// Rows reach this host's own API as $SELF (the public URL, else the
		// listen address), served in process.
		SelfBase: func(context.Context) string { return cmp.Or(strings.TrimRight(s.PublicURL, "/"), base) },
		Agent:    m.tune,
		Embedder: emb,
	}
	var drift atomic.Pointer[mcpimport.Watcher]
	p.MCPToolsChanged = func(server string) {
		if w := drift.Load(); w != nil {
			w.Notify(server)
		}
	}
	if p.MCPStdio, err = stdioServers(lookup); err != nil {
		return nil, err
	}
	if p.Connect, err = connections(lookup); err != nil {
		return nil, err
	}
	if p.MCPStdio != nil {
		d.closers = append(d.closers, func() error { p.MCPStdio.Close(); return nil })
	}
	if embedded {
		p.MaxParams = sqlite.MaxParams // group commits in few statements
	} else {
		p.ReadPage = sqlstore.WholePage // libSQL over HTTP answers a query's rows at once
	}
	// Rows may call this host's own API (as the seed's DIR_PATCH does), and
	// nothing else on loopback unless the operator allows it.
	if self, err := netip.ParseAddrPort(m.ln.Addr().String()); err == nil {
		p.AllowPorts = append(p.AllowPorts, outbound.Exact(self))
	}
	a, err := app.New(s, p)
	if err != nil {
		return nil, err
	}
	d.App = a
	d.closers = append(d.closers, func() error { a.Close(); return nil })
	w := watchDrift(a.API, m.mcpSyncEvery)
	drift.Store(w)
	d.closers = append(d.closers, func() error { w.Close(); return nil })
	background, stop := context.WithCancel(context.Background())
	go a.Run(background) // embeds rows after their writes
	d.closers = append(d.closers, func() error { stop(); return nil })
	if freshDatabase(applied) && !s.NoExamples {
		installed, err := examplerows.InstallAll(ctx, registry, a.Store)
		if err != nil {
			return nil, err
		}
		if host {
			fmt.Fprintf(m.stdout(), "Example rows ready to call: %s (try: go run ./host call DIR_GET DIR_PATCH)\n", strings.Join(installed, ", "))
		}
	}
	if created && host {
		fmt.Fprintf(m.stdout(), "A new owner key was written to %s/owner.key (mode 0600). Use it as:\n"+
			"  export ROWCALL_OWNER_KEY=$(cat %s/owner.key) ROWCALL_URL=%s\n"+
			"  curl -H \"x-terminal-key: $ROWCALL_OWNER_KEY\" $ROWCALL_URL/api/directory\n",
			dataDir, dataDir, base)
	}
	return d, nil
}

// startArchive seals d's receipt chain into segments (--receipt-archive)
// until Close.
func (m *Main) startArchive(d *directory) error {
	if m.archive.dir == "" {
		return nil
	}
	if m.archive.size < 1 || m.archive.every <= 0 || m.archive.retain < 0 {
		return fmt.Errorf("--receipt-segment must be at least 1, --receipt-seal-every positive and --receipt-retain not negative")
	}
	objects, err := OpenArchive(m.archive.dir, m.archive.auth, m.lookup)
	if err != nil {
		return err
	}
	a := d.App
	a.Store.Archive = &sqlstore.Archive{Store: a.Store, Objects: objects, Signer: d.Signer,
		Origin: a.API.Origin(), Size: m.archive.size, Retain: m.archive.retain}
	sealing, sealed := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Store.Archive.Run(sealing, m.archive.every, func(err error) { slog.Error("receipt segments", "err", err) })
	}()
	m.closers = append(m.closers, func() error { sealed(); <-done; return nil })
	return nil
}

// servePprof serves Go's profiler on --pprof until Close.
func (m *Main) servePprof() error {
	ln, err := net.Listen("tcp", m.Pprof)
	if err != nil {
		return fmt.Errorf("--pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: headerTimeout}
	go srv.Serve(ln)
	m.closers = append(m.closers, srv.Close)
	return nil
}

// URL is the base URL the host listens on, once Run has returned.
func (m *Main) URL() string {
	if m.ln == nil {
		return ""
	}
	return "http://" + m.ln.Addr().String()
}

// Wait blocks until ctx ends (nil) or serving fails (its error).
func (m *Main) Wait(ctx context.Context) error {
	select {
	case err := <-m.served:
		return err
	case <-ctx.Done():
		return nil
	}
}

// Close stops serving — new connections are refused and the requests in
// flight finish, 15 s at most — then flushes the receipts still held, stops
// the fn runner and closes the database. It may be called after a failed
// Run, and more than once.
func (m *Main) Close() error {
	var errs []error
	if m.srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		if err := m.srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
		cancel()
		m.srv = nil
	}
	for i := len(m.closers) - 1; i >= 0; i-- {
		errs = append(errs, m.closers[i]())
	}
	m.closers = nil
	return errors.Join(errs...)
}
