package testenv

import (
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// EverythingHTTP starts the pinned npm server-everything (installed in
// serversDir, test/mcpservers) over its streamable HTTP transport on a free
// loopback port, stopped when t ends, and returns its address (host:port);
// it serves MCP at /mcp. serversDir's loopback.cjs keeps it off every other
// interface.
func EverythingHTTP(t testing.TB, serversDir string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH (make test installs nodejs)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	script := filepath.Join(serversDir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cmd := exec.Command(node, "--require", filepath.Join(serversDir, "loopback.cjs"), script, "streamableHttp")
	cmd.Env = []string{"PORT=" + port}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for server-everything to listen on %s", addr)
		}
	}
}
