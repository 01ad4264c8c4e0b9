package test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
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
func rss(b *testing.B, pid int) float64 {
	b.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				b.Fatal(line, err)
			}
			return kb * 1024
		}
	}
	b.Fatal("no VmRSS in /proc/status")
	return 0
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
