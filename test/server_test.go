package test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLinksIgnoreForgedHost: the links a host writes (proof.public_receipt, the
// contract document, ask's matches) name --public-url, else the listen
// address, whatever Host and X-Forwarded-* a client sends; with
// --trust-forwarded they follow the headers a proxy in front sets.
func TestLinksIgnoreForgedHost(t *testing.T) {
	up := newUpstream(t, openMeteo)
	forged := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}
	// links calls the row and reads the three kinds of link, sending hdr and Host.
	links := func(t *testing.T, h *host, host string, hdr map[string]string) (receipt, id string, docs []string) {
		t.Helper()
		got := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "ZZ_TEST_TEMPERATURE", "body": "37.77|-122.42"},
			Host: host, Header: hdr})
		expect(t, got, 200, map[string]any{"ok": true})
		p := proof(t, got)
		for _, path := range []string{"/api/dispatch?key=ZZ_TEST_TEMPERATURE&format=json", "/api/dispatch?ask=temperature"} {
			d := h.do(t, req{Method: "GET", Path: path, Host: host, Header: hdr})
			expect(t, d, 200, nil)
			docs = append(docs, string(d.Raw))
		}
		return p["public_receipt"].(string), p["invocation_id"].(string), docs
	}
	start := func(t *testing.T, flags ...string) *host {
		h := startHost(t, append(allowLoopback, flags...))
		expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: temperatureRow(up.URL)}), 201, nil)
		return h
	}
	// wantBase fails unless every link names base and none the forged host.
	wantBase := func(t *testing.T, base, receipt, id string, docs []string) {
		t.Helper()
		if receipt != base+"/receipt/"+id {
			t.Fatalf("public_receipt %q, want %q", receipt, base+"/receipt/"+id)
		}
		for _, d := range docs {
			if !strings.Contains(d, base+"/api/dispatch?key=") || strings.Contains(d, "evil.example") {
				t.Fatalf("links do not all name %s: %s", base, d)
			}
		}
	}

	t.Run("listen address", func(t *testing.T) {
		h := start(t)
		receipt, id, docs := links(t, h, "evil.example", forged)
		wantBase(t, h.URL, receipt, id, docs)
	})
	t.Run("public url", func(t *testing.T) {
		h := start(t, "--public-url", "https://rowcall.example/", "--trust-forwarded")
		receipt, id, docs := links(t, h, "evil.example", forged)
		wantBase(t, "https://rowcall.example", receipt, id, docs)
	})
	t.Run("trusted proxy", func(t *testing.T) {
		h := start(t, "--trust-forwarded")
		receipt, id, docs := links(t, h, "", map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "proxy.example"})
		wantBase(t, "https://proxy.example", receipt, id, docs)
		receipt, id, docs = links(t, h, "front.example:8443", nil)
		wantBase(t, "http://front.example:8443", receipt, id, docs)
	})
}

// TestIdleConnectionsAreClosed: connections held open after one anonymous
// request neither exhaust the host's descriptors (--max-conns keeps it under
// the limit) nor stay open (--idle-timeout closes them): a new client is served.
func TestIdleConnectionsAreClosed(t *testing.T) {
	// 48 descriptors: the host uses about 13 of its own; without a cap, 60
	// connections take the rest and it stops accepting.
	h := startHostUnder(t, []string{"sh", "-c", `ulimit -n 48 && exec "$0" "$@"`}, t.TempDir(),
		[]string{"--max-conns", "8", "--idle-timeout", "500ms"})
	addr := strings.TrimPrefix(h.URL, "http://")
	conns := make([]net.Conn, 60)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /api/directory HTTP/1.1\r\nHost: %s\r\n\r\n", addr) // keep-alive: HTTP/1.1's default
		conns[i] = c
	}
	client := &http.Client{Timeout: 30 * time.Second}
	res, err := client.Get(h.URL + "/.well-known/rowcall-receipt-keys")
	if err != nil {
		t.Fatalf("a new client is not served while idle connections are open: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil || !strings.HasPrefix(string(got), "HTTP/1.1 401") {
			t.Fatalf("idle connection %d: got %q, %v; want its answer, then the host closing it", i, got, err)
		}
	}
}

// TestConnectionCapKeepsDescriptors: with more connections waiting than
// --max-conns, the host keeps descriptors for its own work: a call on an open
// connection still reaches its upstream (a new socket).
func TestConnectionCapKeepsDescriptors(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHostUnder(t, []string{"sh", "-c", `ulimit -n 48 && exec "$0" "$@"`}, t.TempDir(),
		append(allowLoopback, "--max-conns", "8", "--idle-timeout", "1m"))
	// One connection of our own, kept and reused: new ones would queue behind the flood.
	h.Client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: temperatureRow(up.URL)}), 201, nil)

	addr := strings.TrimPrefix(h.URL, "http://")
	flood := make([]net.Conn, 60)
	for i := range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /api/directory HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		flood[i] = c
	}
	for i, c := range flood[:7] { // the slots left beside ours: answered, then idle
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	got := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "ZZ_TEST_TEMPERATURE", "body": "37.77|-122.42"}})
	expect(t, got, 200, map[string]any{"ok": true, "ran": true})
	if !strings.Contains(got.JSON["result"].(string), `"temperature_2m":15.7`) {
		t.Fatalf("result %s", got.Raw)
	}
}

// TestSlowBodyIsCutOff: a client that sends its headers and then dribbles the
// body is answered and cut off at --read-timeout; a call that takes longer than
// that and than --write-timeout, its body sent at once, still answers.
func TestSlowBodyIsCutOff(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(1500 * time.Millisecond) // longer than --read-timeout and --write-timeout
		openMeteo(w, r)
	})
	h := startHost(t, append(allowLoopback, "--read-timeout", "500ms", "--write-timeout", "500ms")) // a call has --call-timeout
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: temperatureRow(up.URL)}), 201, nil)

	addr := strings.TrimPrefix(h.URL, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/dispatch HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nx-terminal-key: %s\r\nContent-Length: 1000\r\n\r\n{", addr, h.Key)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // one byte every 100 ms: 100 s for the whole body
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()

	call := make(chan resp, 1)
	go func() { call <- dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "37.77|-122.42") }()

	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	answer, err := io.ReadAll(bufio.NewReader(c))
	// The host closes the connection with the dribbled bytes unread, which the
	// kernel may follow with a reset once the answer is out: that too is the
	// cut-off, when the answer was read whole.
	if err != nil && !(errors.Is(err, syscall.ECONNRESET) && bytes.HasSuffix(answer, []byte("}\n"))) {
		t.Fatalf("the slow body was not cut off: %v (read %q)", err, answer)
	}
	if !strings.HasPrefix(string(answer), "HTTP/1.1 400") || !strings.Contains(string(answer), "could not read the request body") {
		t.Fatalf("slow body answered %q", answer)
	}
	got := <-call
	expect(t, got, 200, map[string]any{"ok": true, "ran": true})
	if !strings.Contains(got.JSON["result"].(string), `"temperature_2m":15.7`) {
		t.Fatalf("result %s", got.Raw)
	}
}

// TestMCPStreamOutlastsWriteTimeout: MCP's notification stream (GET /mcp) is
// not an ordinary answer: it still delivers list_changed after --write-timeout.
func TestMCPStreamOutlastsWriteTimeout(t *testing.T) {
	h := startHost(t, []string{"--write-timeout", "1500ms"})
	s := connectMCP(t, h, "x-terminal-key", h.Key)
	s.tools(t)
	time.Sleep(2 * time.Second) // the stream is open longer than --write-timeout
	s.drain()
	createRow(t, h, map[string]any{"key": "LATE_TOOL", "type": "http", "category": "tools", "target": "GET http://127.0.0.1:1/"})
	if !s.waitChanged(10 * time.Second) {
		t.Fatal("no notifications/tools/list_changed on a stream older than --write-timeout")
	}
}
