// Command probe reports what the fn sandbox lets a module reach, as JSON on
// stdout; the fn runner's tests assert that the answer is "nothing but
// arguments, clocks, sleep and random bytes". Built by examples.BuildGo.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	report := map[string]any{"args": os.Args, "env": os.Environ()}
	try := func(name string, err error) {
		report[name] = "ok"
		if err != nil {
			report[name] = err.Error()
		}
	}
	_, err := os.ReadFile("/etc/passwd")
	try("read_file", err)
	_, err = os.ReadDir(".")
	try("read_dir", err)
	try("write_file", os.WriteFile("/tmp/probe", []byte("x"), 0o644))
	in, err := io.ReadAll(os.Stdin)
	try("stdin", err)
	report["stdin_bytes"] = len(in)
	_, err = net.Dial("tcp", "127.0.0.1:80")
	try("dial", err)
	b := make([]byte, 16)
	_, err = rand.Read(b)
	try("random", err)
	report["random_hex"] = hex.EncodeToString(b)
	report["unix"] = time.Now().Unix()
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	report["slept_ms"] = time.Since(start).Milliseconds()
	json.NewEncoder(os.Stdout).Encode(report)
}
