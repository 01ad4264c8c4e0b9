package test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rowcall/rowcall/internal/rowgen"
)

// liveHeap is the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// slowReader is a client whose connections take at most 32 KB into their
// receive buffer: a reader that has stopped part way through a body holds
// the server there, not at the end.
func slowReader() *http.Client {
	dial := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial.DialContext(ctx, network, addr)
			if err == nil {
				err = c.(*net.TCPConn).SetReadBuffer(32 << 10)
			}
			return c, err
		},
	}}
}

// A registry document of 10,000 rows (6.4 MB) is written as its rows are
// read: while a client is part way through it, plain or gzipped, the host in
// this process holds at most 5 MB more live heap than before the request, and
// nothing once it is read.
func TestRegistryHeapIsFlat(t *testing.T) {
	tg := startInProcess(t, []string{"ROWCALL_EMBED_PROVIDER=off"})
	h := tg.host
	importRows(t, h, rowgen.Noise(10_000, 7))
	client := slowReader()
	const bound = 5 << 20
	before := liveHeap()
	for _, gz := range []bool{false, true} {
		req, _ := http.NewRequest("GET", h.URL+"/api/dispatch?registry=1", nil)
		req.Header.Set("x-terminal-key", h.Key)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 {
			t.Fatalf("registry: HTTP %d", res.StatusCode)
		}
		if _, err := io.CopyN(io.Discard, res.Body, 64<<10); err != nil {
			t.Fatal(err)
		}
		during := liveHeap()
		n, err := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		after := liveHeap()
		t.Logf("gzip=%v: %d bytes; live heap %d before, %d part way (+%d), %d after", gz, n+64<<10, before, during, int64(during)-int64(before), after)
		if during > before+bound {
			t.Errorf("gzip=%v: the live heap grew by %d bytes while the document was read; at most %d", gz, during-before, bound)
		}
		if after > before+bound {
			t.Errorf("gzip=%v: the live heap is %d bytes over before once the document is read", gz, after-before)
		}
	}
}

// rss is a process's resident set size in bytes, from /proc.
func rss(b testing.TB, pid int) float64 { return procStatus(b, pid, "VmRSS") }

// procStatus is a size /proc/PID/status gives (VmRSS, VmHWM), in bytes.
func procStatus(b testing.TB, pid int, field string) float64 {
	b.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				b.Fatal(line, err)
			}
			return kb * 1024
		}
	}
	b.Fatal("no " + field + " in /proc/status")
	return 0
}

// Sixty anonymous posts at once of a 9 MiB form to POST /connect, and then
// sixty of a 40 MiB multipart form, leave a `rowcall serve` process's peak
// resident memory within 100 MB of what it was idle: each is refused 413 by
// its length before a byte of it is read (POST /connect reads at most 16 KiB).
func TestConnectFloodRSS(t *testing.T) {
	cfg, _ := json.Marshal(map[string]any{"providers": map[string]any{"idp": map[string]any{
		"discovery_url": "http://127.0.0.1:9/.well-known/openid-configuration", "client_id": "rowcall",
		"client_secret_env": "IDP_CLIENT_SECRET", "scopes": []string{"openid"}}}})
	h := startHost(t, nil, "ROWCALL_EMBED_PROVIDER=off", "ROWCALL_CONNECTIONS="+string(cfg),
		"ROWCALL_CONNECTIONS_KEY=k1:"+randomKey(32), "IDP_CLIENT_SECRET=x")
	pid := h.cmd.Process.Pid
	// The connection's form page answers: the route is served.
	if got := h.do(t, req{Method: "GET", Path: "/connect?c=x", NoAuth: true}); got.Status != 400 || !strings.Contains(string(got.Raw), "refused") {
		t.Fatalf("GET /connect: %d %.200s", got.Status, got.Raw)
	}
	// Peak RSS from here (VmHWM once reset; clear_refs 5 resets it).
	if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0); err != nil {
		t.Skip("cannot reset the peak RSS: ", err)
	}
	idle := rss(t, pid)
	const n = 60
	urlencoded := append([]byte("c="), bytes.Repeat([]byte("a"), 9<<20)...)
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	fw, _ := mw.CreateFormField("c")
	fw.Write(bytes.Repeat([]byte("a"), 40<<20))
	mw.Close()
	for _, f := range []struct {
		name, contentType string
		body              []byte
	}{{"urlencoded", "application/x-www-form-urlencoded", urlencoded}, {"multipart", mw.FormDataContentType(), mp.Bytes()}} {
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				got, err := h.send(req{Method: "POST", Path: "/connect", NoAuth: true, Body: f.body, Header: map[string]string{"Content-Type": f.contentType}})
				if err == nil {
					statuses[i] = got.Status
				}
			})
		}
		wg.Wait()
		peak := procStatus(t, pid, "VmHWM")
		t.Logf("%d posts of %d MiB %s at once: idle RSS %.1f MB, peak %.1f MB (+%.1f MB)", n, len(f.body)>>20, f.name, idle/1e6, peak/1e6, (peak-idle)/1e6)
		if peak-idle > 100e6 {
			t.Fatalf("%s: the peak RSS grew %.1f MB over idle (%.1f MB)", f.name, (peak-idle)/1e6, idle/1e6)
		}
		for _, s := range statuses {
			if s != http.StatusRequestEntityTooLarge {
				t.Fatalf("%s: answers %v, want 413 each", f.name, statuses)
			}
		}
	}
	// Still serving: a victim's read answers.
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory?limit=1"}), 200, nil)
}

// BenchmarkRegistryRSS reports the resident memory of a `rowcall serve`
// process with 10,000 rows after one registry request and after 20
// (docs/benchmarks.md): flat means the two are within 10%.
func BenchmarkRegistryRSS(b *testing.B) {
	h := startHost(b, nil, "ROWCALL_EMBED_PROVIDER=off") // words only: the encoder's weights are not what is measured
	importRows(b, h, rowgen.Noise(10_000, 7))
	pid := h.cmd.Process.Pid
	get := func() {
		got := h.do(b, req{Method: "GET", Path: "/api/dispatch?registry=1", Header: map[string]string{"Accept-Encoding": "gzip"}})
		if got.Status != 200 {
			b.Fatalf("registry: HTTP %d", got.Status)
		}
	}
	start := rss(b, pid)
	for b.Loop() {
		get()
		one := rss(b, pid)
		for range 19 {
			get()
		}
		twenty := rss(b, pid)
		b.ReportMetric(start/(1<<20), "MB-before")
		b.ReportMetric(one/(1<<20), "MB-after-1")
		b.ReportMetric(twenty/(1<<20), "MB-after-20")
		b.ReportMetric(twenty/one, "ratio-20/1")
	}
}
