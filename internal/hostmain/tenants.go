package hostmain

// Tenants (`serve --tenants`, docs/tenants.md): one host serves a directory
// per tenant, each the same application that `serve` builds for one (open),
// over its own data folder DATA/tenants/NAME: its own SQLite file, owner and
// receipt keys, compiled modules and receipt chain, and of the host's
// environment only what the operator named for it (env). Nothing below this file
// knows there are tenants: a request finds its tenant here, by the path
// /t/NAME/ (stripped before the tenant's handler sees it) or, for the
// well-known documents whose URLs insert the path (RFC 8414, RFC 9728),
// /.well-known/DOC/t/NAME/…; the operator's API is under /operator/.
//
// Tenants are opened on demand and closed when idle: at most --tenants-open
// are open at once (the least recently used idle one is closed to open
// another), so open files and memory stay bounded however many exist.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/sqlstore/libsql"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// DefaultTenantsOpen is how many tenants a host keeps open at once by
// default (--tenants-open).
const DefaultTenantsOpen = 64

// tenantName is a tenant's name: lowercase letters, digits and hyphens, 3 to
// 63 characters, starting and ending with a letter or digit (so it is also
// a DNS label).
var tenantName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)

// CheckTenantName refuses a name that is not a tenant's.
func CheckTenantName(name string) error {
	if tenantName.MatchString(name) {
		return nil
	}
	return &rowcall.Error{Code: rowcall.EInvalidTenant, Message: fmt.Sprintf("%q is not a tenant name", cut(name, 80)),
		HowToFix: "a tenant name is 3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit (e.g. acme-support)"}
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// checkTenants refuses settings that cannot serve tenants.
func (m *Main) checkTenants() error {
	switch {
	case m.DBURL != "" && (!strings.Contains(m.DBURL, TenantPlaceholder) || m.tenantsDBAdmin == ""):
		return errors.New("--tenants with --db keeps each tenant in a libSQL namespace: --db names a tenant's database with " + TenantPlaceholder +
			" in the host (sqld finds the namespace from the host name's first label), e.g. --db 'http://" + TenantPlaceholder +
			".sqld.internal:8080', and --tenants-db-admin is sqld's admin API (--admin-listen-addr), where namespaces are created and deleted")
	case m.archive.dir != "":
		return errors.New("--tenants cannot be combined with --receipt-archive yet: each tenant keeps its whole receipt chain in its own file")
	case m.Settings.TrustForwarded && m.Settings.PublicURL == "":
		return errors.New("--tenants behind a proxy needs --public-url: a tenant's links are built from it and the tenant's path")
	case m.tenantsOpen < 1:
		return errors.New("--tenants-open must be at least 1")
	}
	return nil
}

// tenants is the host's handler with --tenants.
type tenants struct {
	m      *Main
	dir    string // DATA/tenants
	base   string // the host's URL
	keys   *keyRing
	embed  func() rowcall.Embedder
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	open   map[string]*tenant
	opened sync.Map // name → *sync.Mutex: one opening or deletion of a tenant at a time
}

// tenant is one open tenant.
type tenant struct {
	name  string
	d     *directory
	users int       // requests in flight
	last  time.Time // its last request's start
}

// serveTenants starts serving the tenants under DATA/tenants at base.
func (m *Main) serveTenants(ctx context.Context, base string) (*tenants, error) {
	envKey, _ := m.lookup("ROWCALL_OPERATOR_KEY")
	created, err := ensureKey(filepath.Join(m.DataDir, "operator.key"), envKey)
	if err != nil {
		return nil, err
	}
	ts := &tenants{m: m, dir: filepath.Join(m.DataDir, "tenants"), base: base, open: map[string]*tenant{},
		keys: &keyRing{dir: m.DataDir, env: strings.TrimSpace(envKey), name: "operator.key"}}
	if err := os.MkdirAll(ts.dir, 0o700); err != nil {
		return nil, err
	}
	if m.DBURL != "" {
		libsql.ResolveLocalhost() // a namespace on this machine: http://NAME.localhost:PORT
	}
	ts.ctx, ts.cancel = context.WithCancel(context.WithoutCancel(ctx))
	// Every tenant embeds with the same encoder (the model is the
	// operator's); each keeps its own vectors.
	ts.embed = sync.OnceValue(func() rowcall.Embedder { return embedder(ts.ctx, m.Settings, m.DataDir) })
	if created {
		fmt.Fprintf(m.stdout(), "A new operator key was written to %s/operator.key (mode 0600). Create a tenant with:\n"+
			"  curl -H \"Authorization: Bearer $(cat %s/operator.key)\" -d '{\"name\":\"acme\"}' %s/operator/tenants\n",
			m.DataDir, m.DataDir, base)
	}
	return ts, nil
}

// ServeHTTP routes a request to the operator's API or to its tenant.
func (ts *tenants) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "/operator/tenants" || strings.HasPrefix(path, "/operator/tenants/"):
		ts.operator(w, r)
	case strings.HasPrefix(path, "/t/"):
		// The name is read from the path as sent: an escaped slash is
		// part of the name (and refused), not a separator.
		name, _, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/t/"), "/")
		if n, err := url.PathUnescape(name); err == nil {
			name = n
		}
		_, rest, slash := strings.Cut(strings.TrimPrefix(path, "/t/"), "/")
		if !slash && (r.Method == http.MethodGet || r.Method == http.MethodHead) && CheckTenantName(name) == nil {
			// The console is at /t/NAME/: its page's relative links
			// resolve under the tenant only from there. The Location is
			// relative too, so a proxy's path in front of /t/ stays.
			loc := name + "/"
			if r.URL.RawQuery != "" {
				loc += "?" + r.URL.RawQuery
			}
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		ts.serve(w, r, name, "/"+rest)
	case strings.HasPrefix(path, "/.well-known/"):
		// RFC 8414 and RFC 9728 insert the issuer's or resource's path
		// after the document's name: /.well-known/DOC/t/NAME/REST.
		doc, inserted, _ := strings.Cut(strings.TrimPrefix(path, "/.well-known/"), "/")
		tail, ok := strings.CutPrefix(inserted, "t/")
		if !ok {
			api.WriteError(w, r, noTenantHere())
			return
		}
		name, rest, _ := strings.Cut(tail, "/")
		if rest != "" {
			rest = "/" + rest
		}
		ts.serve(w, r, name, "/.well-known/"+doc+rest)
	default:
		api.WriteError(w, r, noTenantHere())
	}
}

func noTenantHere() error {
	return &rowcall.Error{Code: rowcall.ENotFound, Message: "this host serves a directory per tenant, under /t/NAME/",
		HowToFix: "use your tenant's URL (BASE/t/NAME/api/…, BASE/t/NAME/mcp); the operator lists tenants at GET /operator/tenants"}
}

// serve serves r as path in tenant name.
func (ts *tenants) serve(w http.ResponseWriter, r *http.Request, name, path string) {
	if err := CheckTenantName(name); err != nil {
		api.WriteError(w, r, err)
		return
	}
	if clean := pathpkg.Clean(path); clean != strings.TrimSuffix(path, "/") && clean != path {
		// A tenant's mux would redirect to the clean path, outside the tenant.
		api.WriteError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "the path has . or .. segments or doubled slashes",
			HowToFix: "send the path as it resolves: BASE/t/" + name + "/api/…"})
		return
	}
	t, err := ts.acquire(r.Context(), name)
	if err != nil {
		api.WriteError(w, r, err)
		return
	}
	defer ts.release(t)
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = path, ""
	r2.RequestURI = r2.URL.RequestURI()
	t.d.App.Handler.ServeHTTP(w, r2)
}

// folder is tenant name's data folder.
func (ts *tenants) folder(name string) string { return filepath.Join(ts.dir, name) }

// TenantPlaceholder is what --db writes where a tenant's name goes, with
// --tenants.
const TenantPlaceholder = "{tenant}"

// dbURL is tenant name's libSQL database (its namespace), or "" for its
// SQLite file.
func (ts *tenants) dbURL(name string) string {
	return strings.ReplaceAll(ts.m.DBURL, TenantPlaceholder, name)
}

// namespace creates (create) or deletes tenant name's libSQL namespace
// through sqld's admin API; without --db it does nothing.
func (ts *tenants) namespace(ctx context.Context, name string, create bool) error {
	if ts.m.DBURL == "" {
		return nil
	}
	method, path, body := http.MethodDelete, "/v1/namespaces/"+name, io.Reader(nil)
	if create {
		method, path, body = http.MethodPost, path+"/create", strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(ts.m.tenantsDBAdmin, "/")+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("tenant %s: sqld's admin API: %w", name, err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 1024))
		return fmt.Errorf("tenant %s: sqld's admin API answered %s to %s %s: %s", name, res.Status, method, path, msg)
	}
	return nil
}

// exists reports whether tenant name exists: its folder holds its owner key
// (written first when it is created).
func (ts *tenants) exists(name string) bool {
	_, err := os.Stat(filepath.Join(ts.folder(name), "owner.key"))
	return err == nil
}

// lock is the lock one opening or deletion of tenant name holds.
func (ts *tenants) lock(name string) *sync.Mutex {
	mu, _ := ts.opened.LoadOrStore(name, &sync.Mutex{})
	return mu.(*sync.Mutex)
}

// acquire returns tenant name, open, counting a request in flight on it
// until release; it opens the tenant when it exists and is not open.
func (ts *tenants) acquire(ctx context.Context, name string) (*tenant, error) {
	ts.mu.Lock()
	if t := ts.open[name]; t != nil {
		t.users++
		t.last = time.Now()
		ts.mu.Unlock()
		return t, nil
	}
	ts.mu.Unlock()
	mu := ts.lock(name)
	mu.Lock()
	defer mu.Unlock()
	ts.mu.Lock()
	if t := ts.open[name]; t != nil { // opened while this one waited
		t.users++
		t.last = time.Now()
		ts.mu.Unlock()
		return t, nil
	}
	ts.mu.Unlock()
	if !ts.exists(name) {
		return nil, unknownTenant(name)
	}
	if _, err := os.Stat(filepath.Join(ts.folder(name), "suspended")); err == nil {
		return nil, &rowcall.Error{Code: rowcall.ETenantSuspended, Args: []string{name}, Message: "the operator suspended tenant " + name,
			HowToFix: "ask the host's operator to resume it"}
	}
	d, err := ts.m.open(ts.ctx, ts.folder(name), ts.dbURL(name), ts.base+"/t/"+name, ts.env(name), ts.embed(), false)
	if err != nil {
		return nil, err
	}
	t := &tenant{name: name, d: d, users: 1, last: time.Now()}
	ts.mu.Lock()
	ts.open[name] = t
	idle := ts.evict()
	ts.mu.Unlock()
	for _, o := range idle {
		ts.shut(o)
	}
	return t, nil
}

// release ends a request on t.
func (ts *tenants) release(t *tenant) {
	ts.mu.Lock()
	t.users--
	idle := ts.evict()
	ts.mu.Unlock()
	for _, o := range idle {
		ts.shut(o)
	}
}

// evict takes the least recently used idle tenants out of the open ones
// while more than --tenants-open are open, and returns them to be closed.
// ts.mu is held.
func (ts *tenants) evict() []*tenant {
	if len(ts.open) <= ts.m.tenantsOpen {
		return nil
	}
	var idle []*tenant
	for _, t := range ts.open {
		if t.users == 0 {
			idle = append(idle, t)
		}
	}
	slices.SortFunc(idle, func(a, b *tenant) int { return a.last.Compare(b.last) })
	idle = idle[:min(len(idle), len(ts.open)-ts.m.tenantsOpen)]
	for _, t := range idle {
		delete(ts.open, t.name)
	}
	return idle
}

// shut closes a tenant taken out of the open ones.
func (ts *tenants) shut(t *tenant) {
	t.d.App.API.Close()
	if err := t.d.Close(); err != nil {
		slog.Error("tenant close", "tenant", t.name, "err", err)
	}
}

// CloseStreams ends the open tenants' MCP notification streams (shutdown
// would wait on them).
func (ts *tenants) CloseStreams() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.open {
		t.d.App.API.Close()
	}
}

// Close closes every open tenant.
func (ts *tenants) Close() error {
	ts.cancel()
	ts.mu.Lock()
	open := ts.open
	ts.open = map[string]*tenant{}
	ts.mu.Unlock()
	var errs []error
	for _, t := range open {
		errs = append(errs, t.d.Close())
	}
	return errors.Join(errs...)
}

// env is the environment tenant name sees (its rows' credentials): only the
// host's variables the operator named for it, TENANT_<NAME>__<VARIABLE>
// (the name in capitals, hyphens as underscores), each seen as <VARIABLE>.
// Nothing else of the host's environment reaches a tenant.
func (ts *tenants) env(name string) func(string) (string, bool) {
	prefix := TenantEnvPrefix(name)
	return func(v string) (string, bool) { return ts.m.lookup(prefix + v) }
}

// TenantEnvPrefix is what the host's variables for tenant name start with.
func TenantEnvPrefix(name string) string {
	return "TENANT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "__"
}

func unknownTenant(name string) error {
	return &rowcall.Error{Code: rowcall.EUnknownTenant, Args: []string{name}, Message: "no tenant is named " + name + " on this host",
		HowToFix: "check the tenant's URL; the operator lists tenants at GET /operator/tenants"}
}

// operator serves the operator's API: POST and GET /operator/tenants,
// GET, DELETE /operator/tenants/NAME, POST /operator/tenants/NAME/suspend
// and /resume, GET /operator/tenants/NAME/export.
func (ts *tenants) operator(w http.ResponseWriter, r *http.Request) {
	secret, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !api.OwnerKey(strings.TrimSpace(secret), ts.keys.Keys()) {
		api.WriteError(w, r, &rowcall.Error{Code: rowcall.EUnauthorized, Message: "the operator's API takes the operator key",
			HowToFix: "send Authorization: Bearer $ROWCALL_OPERATOR_KEY (or DATA/operator.key)"})
		return
	}
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, "/operator/tenants"), "/")
	name, action, _ := strings.Cut(rest, "/")
	switch {
	case rest == "" && r.Method == http.MethodPost:
		ts.create(w, r)
	case rest == "" && r.Method == http.MethodGet:
		ts.list(w, r)
	case rest == "":
		api.WriteError(w, r, methodNotAllowed("GET or POST"))
	default:
		if err := CheckTenantName(name); err != nil {
			api.WriteError(w, r, err)
			return
		}
		if !ts.exists(name) {
			api.WriteError(w, r, unknownTenant(name))
			return
		}
		switch {
		case action == "" && r.Method == http.MethodGet:
			api.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tenant": ts.stats(name)})
		case action == "" && r.Method == http.MethodDelete:
			ts.delete(w, r, name)
		case action == "" && r.Method == http.MethodPatch:
			ts.setQuotas(w, r, name)
		case (action == "suspend" || action == "resume") && r.Method == http.MethodPost:
			ts.suspend(w, r, name, action == "suspend")
		case action == "export" && r.Method == http.MethodGet:
			ts.export(w, r, name)
		default:
			api.WriteError(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: "no such operator route",
				HowToFix: "GET, PATCH, DELETE /operator/tenants/NAME; POST …/suspend, …/resume; GET …/export"})
		}
	}
}

func methodNotAllowed(allowed string) error {
	return &rowcall.Error{Code: rowcall.EInvalid, Status: http.StatusMethodNotAllowed, Message: "this route takes " + allowed}
}

// create handles POST /operator/tenants {"name": …}: a new tenant, opened
// (its database migrated, its keys made), answering its owner key once.
func (ts *tenants) create(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name string `json:"name"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		api.WriteError(w, r, &rowcall.Error{Code: rowcall.EBadJSON, Message: "the body is not {\"name\": …}: " + err.Error(), HowToFix: `send {"name":"acme"}`})
		return
	}
	if err := CheckTenantName(body.Name); err != nil {
		api.WriteError(w, r, err)
		return
	}
	name := body.Name
	mu := ts.lock(name)
	mu.Lock()
	folder := ts.folder(name)
	if _, err := os.Stat(folder); err == nil {
		mu.Unlock()
		api.WriteError(w, r, &rowcall.Error{Code: rowcall.ETenantExists, Args: []string{name}, Message: "a tenant named " + name + " exists",
			HowToFix: "choose another name, or delete the tenant first (DELETE /operator/tenants/" + name + ")"})
		return
	}
	key := newOwnerKey()
	err := ts.namespace(r.Context(), name, true)
	if err == nil {
		err = writeSecret(filepath.Join(folder, "owner.key"), key)
	}
	mu.Unlock()
	if err == nil {
		var t *tenant
		if t, err = ts.acquire(r.Context(), name); err == nil {
			ts.release(t)
		}
	}
	if err != nil {
		os.RemoveAll(folder)
		ts.namespace(context.WithoutCancel(r.Context()), name, false)
		api.WriteError(w, r, err)
		return
	}
	slog.Info("tenant created", "tenant", name)
	api.WriteJSON(w, http.StatusCreated, map[string]any{"ok": true, "name": name, "url": ts.base + "/t/" + name, "owner_key": key})
}

// tenantStats is what the operator sees of a tenant.
type tenantStats struct {
	Name         string `json:"name"`
	URL          string `json:"url"`
	Open         bool   `json:"open"`
	Suspended    bool   `json:"suspended"`
	Rows         int64  `json:"rows"`
	CallsToday   int64  `json:"calls_today"`
	Receipts     int64  `json:"receipts"`
	StorageBytes int64  `json:"storage_bytes"`
	LastUse      string `json:"last_use,omitempty"`
	Quotas       Quotas `json:"quotas"`
}

// Quotas are the limits the operator sets on a tenant, kept in its database
// (table quotas) and enforced there (migrations/0030_quotas.sql); nil is
// none.
type Quotas struct {
	Rows *int64 `json:"rows"` // rows in its directory
}

// list handles GET /operator/tenants.
func (ts *tenants) list(w http.ResponseWriter, r *http.Request) {
	entries, err := os.ReadDir(ts.dir)
	if err != nil {
		api.WriteError(w, r, err)
		return
	}
	out := []tenantStats{}
	for _, e := range entries {
		if e.IsDir() && CheckTenantName(e.Name()) == nil {
			out = append(out, ts.stats(e.Name()))
		}
	}
	api.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tenants": out})
}

// stats reads tenant name's figures: from its open database, or from its
// file opened for the read.
func (ts *tenants) stats(name string) tenantStats {
	s := tenantStats{Name: name, URL: ts.base + "/t/" + name}
	folder := ts.folder(name)
	_, err := os.Stat(filepath.Join(folder, "suspended"))
	s.Suspended = err == nil
	var last time.Time
	filepath.WalkDir(folder, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				s.StorageBytes += info.Size()
				if strings.HasPrefix(d.Name(), "rowcall.db") && info.ModTime().After(last) {
					last = info.ModTime()
				}
			}
		}
		return nil
	})
	ts.mu.Lock()
	t := ts.open[name]
	if t != nil {
		s.Open, last = true, t.last
		t.users++ // held open while it is read
	}
	ts.mu.Unlock()
	if !last.IsZero() {
		s.LastUse = last.UTC().Format(rowcall.Timestamp)
	}
	var db *sql.DB
	if t != nil {
		db = t.d.App.Store.DB
		defer ts.release(t)
	} else if conn, err := ts.openDB(name); err == nil {
		db = conn
		defer conn.Close()
	}
	if db != nil {
		var rows sql.NullInt64
		if db.QueryRow(`SELECT value FROM quotas WHERE name = 'rows'`).Scan(&rows) == nil && rows.Valid {
			s.Quotas.Rows = &rows.Int64
		}
		today := rowcall.Day(time.Now()).Format(rowcall.Timestamp)
		db.QueryRow(`SELECT (SELECT COUNT(*) FROM directory), (SELECT COUNT(*) FROM receipts), (SELECT COUNT(*) FROM receipts WHERE started_at >= ?)`,
			today).Scan(&s.Rows, &s.Receipts, &s.CallsToday)
		if ts.m.DBURL != "" { // the namespace's pages, beside the folder's keys
			var bytes int64
			if db.QueryRow(`SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&bytes) == nil {
				s.StorageBytes += bytes
			}
		}
	}
	return s
}

// setQuotas handles PATCH /operator/tenants/NAME {"quotas": {"rows": N}}:
// each quota given is set (null removes it), in the tenant's database.
func (ts *tenants) setQuotas(w http.ResponseWriter, r *http.Request, name string) {
	var body struct {
		Quotas map[string]*int64 `json:"quotas"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Quotas == nil {
		api.WriteError(w, r, &rowcall.Error{Code: rowcall.EBadJSON, Message: "the body is not {\"quotas\": {…}}", HowToFix: `send {"quotas":{"rows":1000}} (null removes a quota)`})
		return
	}
	for q, v := range body.Quotas {
		if q != "rows" || v != nil && *v < 0 {
			api.WriteError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: fmt.Sprintf("quota %q: the quotas are rows (a whole number of at least 0, or null for none)", q),
				Extra: map[string]any{"field": "quotas." + q}})
			return
		}
	}
	mu := ts.lock(name)
	mu.Lock()
	err := ts.borrow(name, func(d *directory) error {
		for q, v := range body.Quotas {
			var err error
			if v == nil {
				_, err = d.App.Store.DB.ExecContext(r.Context(), `DELETE FROM quotas WHERE name = ?`, q)
			} else {
				_, err = d.App.Store.DB.ExecContext(r.Context(), `INSERT INTO quotas (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`, q, *v)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	mu.Unlock()
	if err != nil {
		api.WriteError(w, r, err)
		return
	}
	api.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tenant": ts.stats(name)})
}

// openDB opens tenant name's database alone, to read it.
func (ts *tenants) openDB(name string) (*sql.DB, error) {
	if ts.m.DBURL == "" {
		return sqlite.Open(filepath.Join(ts.folder(name), "rowcall.db"))
	}
	return libsql.Open(ts.ctx, ts.dbURL(name))
}

// suspend handles POST /operator/tenants/NAME/suspend and /resume: a
// suspended tenant is closed and refuses every request (tenant_suspended)
// until resumed; its data stays.
func (ts *tenants) suspend(w http.ResponseWriter, r *http.Request, name string, on bool) {
	mu := ts.lock(name)
	mu.Lock()
	defer mu.Unlock()
	marker := filepath.Join(ts.folder(name), "suspended")
	if on {
		if err := os.WriteFile(marker, []byte(time.Now().UTC().Format(rowcall.Timestamp)+"\n"), 0o600); err != nil {
			api.WriteError(w, r, err)
			return
		}
		ts.close(name)
	} else if err := os.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		api.WriteError(w, r, err)
		return
	}
	api.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tenant": ts.stats(name)})
}

// close closes tenant name if it is open, once its requests in flight end.
// Its lock is held.
func (ts *tenants) close(name string) {
	for {
		ts.mu.Lock()
		t := ts.open[name]
		if t == nil || t.users == 0 {
			delete(ts.open, name)
			ts.mu.Unlock()
			if t != nil {
				ts.shut(t)
			}
			return
		}
		ts.mu.Unlock()
		time.Sleep(10 * time.Millisecond) // a request in flight ends
	}
}

// export handles GET /operator/tenants/NAME/export: a consistent copy of
// the tenant's SQLite database (VACUUM INTO), as a file to download.
func (ts *tenants) export(w http.ResponseWriter, r *http.Request, name string) {
	mu := ts.lock(name)
	mu.Lock()
	defer mu.Unlock()
	if ts.m.DBURL != "" {
		ts.dump(w, r, name)
		return
	}
	tmp, err := os.MkdirTemp("", "rowcall-export-")
	if err != nil {
		api.WriteError(w, r, err)
		return
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, name+".db")
	err = ts.borrow(name, func(d *directory) error {
		_, err := d.App.Store.DB.ExecContext(r.Context(), `VACUUM INTO ?`, path)
		return err
	})
	if err != nil {
		api.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.sqlite3")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.db"`)
	http.ServeFile(w, r, path)
}

// dump answers the export of a tenant in a libSQL namespace: sqld's own
// dump of it (GET /dump: the SQL that rebuilds it), as NAME.sql.
func (ts *tenants) dump(w http.ResponseWriter, r *http.Request, name string) {
	u, err := url.Parse(ts.dbURL(name))
	if err == nil {
		u.Path, u.RawQuery = "/dump", ""
		if u.Scheme == "libsql" {
			u.Scheme = "https"
		}
		var req *http.Request
		if req, err = http.NewRequestWithContext(r.Context(), http.MethodGet, u.String(), nil); err == nil {
			var res *http.Response
			if res, err = http.DefaultClient.Do(req); err == nil {
				defer res.Body.Close()
				if res.StatusCode == http.StatusOK {
					w.Header().Set("Content-Type", "application/sql")
					w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.sql"`)
					io.Copy(w, res.Body)
					return
				}
				err = fmt.Errorf("tenant %s: sqld answered %s to GET /dump", name, res.Status)
			}
		}
	}
	api.WriteError(w, r, err)
}

// borrow runs fn on tenant name's directory for the operator: the open one,
// else one opened for fn alone (a suspended tenant's too). Its lock is held.
func (ts *tenants) borrow(name string, fn func(*directory) error) error {
	ts.mu.Lock()
	t := ts.open[name]
	if t != nil {
		t.users++
	}
	ts.mu.Unlock()
	if t != nil {
		defer ts.release(t)
		return fn(t.d)
	}
	d, err := ts.m.open(ts.ctx, ts.folder(name), ts.dbURL(name), ts.base+"/t/"+name, ts.env(name), ts.embed(), false)
	if err != nil {
		return err
	}
	defer d.Close()
	return fn(d)
}

// delete handles DELETE /operator/tenants/NAME: the tenant is closed and its
// folder removed; its chain's last signed checkpoint is kept beside the
// tenants (DATA/tenants-deleted/NAME-TIME.checkpoint, the signed note GET /.well-known/rowcall-checkpoint answers) and answered.
func (ts *tenants) delete(w http.ResponseWriter, r *http.Request, name string) {
	mu := ts.lock(name)
	mu.Lock()
	defer mu.Unlock()
	rec := httptest.NewRecorder()
	err := ts.borrow(name, func(d *directory) error {
		d.App.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/rowcall-checkpoint", nil))
		return nil
	})
	checkpoint := rec.Body.String() // a signed note: the chain's size and head, signed by the tenant's key
	if err == nil && (rec.Code != http.StatusOK || checkpoint == "") {
		err = fmt.Errorf("tenant %s: its checkpoint could not be read (%d): %s", name, rec.Code, cut(rec.Body.String(), 200))
	}
	if err != nil {
		api.WriteError(w, r, err)
		return
	}
	ts.close(name)
	if err := ts.namespace(r.Context(), name, false); err != nil {
		api.WriteError(w, r, err)
		return
	}
	kept := filepath.Join(ts.m.DataDir, "tenants-deleted", name+"-"+time.Now().UTC().Format("20060102T150405.000Z")+".checkpoint")
	err = os.MkdirAll(filepath.Dir(kept), 0o700)
	if err == nil {
		err = os.WriteFile(kept, []byte(checkpoint), 0o600)
	}
	if err != nil {
		api.WriteError(w, r, err)
		return
	}
	// Renamed away first, so a request arriving now finds no tenant.
	gone := filepath.Join(ts.dir, "."+name+"-deleted-"+randomSuffix())
	if err := os.Rename(ts.folder(name), gone); err != nil {
		api.WriteError(w, r, err)
		return
	}
	if err := os.RemoveAll(gone); err != nil {
		slog.Error("tenant delete", "tenant", name, "err", err)
	}
	slog.Info("tenant deleted", "tenant", name, "checkpoint", kept)
	api.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "name": name, "checkpoint": checkpoint, "checkpoint_file": kept})
}

func randomSuffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// AdoptTenant makes the single directory whose data folder is from (its
// rowcall.db, owner key and receipt key) the tenant name of the host whose
// data folder is dataDir (`rowcall tenant adopt`). The database is copied as
// one consistent snapshot (VACUUM INTO), so a host may still be serving from;
// its receipt chain continues in the tenant, signed with the same key, and
// from is left as it was. lookup supplies the keys a host of from took from
// its environment ($ROWCALL_OWNER_KEY, $ROWCALL_RECEIPT_KEY) when from holds
// no file of them. The tenant appears whole or not at all: it is built
// beside the tenants and renamed into place.
func AdoptTenant(ctx context.Context, dataDir, name, from string, lookup func(string) (string, bool)) error {
	if err := CheckTenantName(name); err != nil {
		return err
	}
	tenantsDir := filepath.Join(dataDir, "tenants")
	dest := filepath.Join(tenantsDir, name)
	if _, err := os.Stat(dest); err == nil {
		return &rowcall.Error{Code: rowcall.ETenantExists, Args: []string{name}, Message: "a tenant named " + name + " exists",
			HowToFix: "choose another name, or delete the tenant first (rowcall tenant delete " + name + ")"}
	}
	src := filepath.Join(from, "rowcall.db")
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("%s holds no rowcall database (rowcall.db): %w", from, err)
	}
	keys := map[string]string{}
	for file, variable := range map[string]string{"owner.key": "ROWCALL_OWNER_KEY", "receipt.key": "ROWCALL_RECEIPT_KEY"} {
		b, err := os.ReadFile(filepath.Join(from, file))
		value := strings.TrimSpace(string(b))
		if err != nil {
			value, _ = lookup(variable)
			value = strings.TrimSpace(value)
		}
		if value == "" {
			return fmt.Errorf("%s holds no %s and $%s is unset: give the key the directory's host used, so its owner can sign in and its chain stays signed by one key", from, file, variable)
		}
		keys[file] = value
	}
	if err := os.MkdirAll(tenantsDir, 0o700); err != nil {
		return err
	}
	building := filepath.Join(tenantsDir, "."+name+"-adopting-"+randomSuffix())
	defer os.RemoveAll(building)
	if err := os.Mkdir(building, 0o700); err != nil {
		return err
	}
	db, err := sqlite.Open(src)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, filepath.Join(building, "rowcall.db"))
	db.Close()
	if err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	for file, value := range keys {
		if err := writeSecret(filepath.Join(building, file), value); err != nil {
			return err
		}
	}
	return os.Rename(building, dest)
}
