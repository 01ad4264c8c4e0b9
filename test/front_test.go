package test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The worker's front sends a request again when wrangler answered it
// wranglerRestarted, also when wrangler gzipped that answer (it does for a
// request that accepts gzip, as Go's clients' requests do); any other 503
// reaches the client as it was sent.
//
//	go test ./test -count 1 -run TestWranglerFrontResends
func TestWranglerFrontResends(t *testing.T) {
	var seen atomic.Int32
	wrangler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch n := seen.Add(1); {
		case n == 1: // the restart, gzipped
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			io.WriteString(zw, wranglerRestarted+" Please try sending the request again.")
			zw.Close()
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write(z.Bytes())
		case string(body) == "crash": // the worker's own 503
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"internal"}`)
		default:
			io.WriteString(w, "got "+string(body))
		}
	}))
	defer wrangler.Close()
	front := wranglerFront(t, wrangler.URL)
	res, err := http.Post(front+"/api/dispatch", "application/json", strings.NewReader("call"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(b) != "got call" || seen.Load() != 2 {
		t.Fatalf("through the front: %d %q after %d requests, want 200 \"got call\" after 2", res.StatusCode, b, seen.Load())
	}
	res, err = http.Post(front+"/_worker/crash", "application/json", strings.NewReader("crash"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 503 || string(b) != `{"error":"internal"}` || seen.Load() != 3 {
		t.Fatalf("the worker's own 503: %d %q after %d requests", res.StatusCode, b, seen.Load())
	}
}
