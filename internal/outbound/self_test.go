package outbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// roundTripFunc is a RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A request under the base URL is served by the handler in-process, headers
// and body as sent; any other goes to Next.
func TestSelfServesOwnAPIInProcess(t *testing.T) {
	var nextCalls int
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		nextCalls++
		return nil, errors.New("network: " + r.URL.String())
	})
	s := &Self{Base: func(context.Context) string { return "https://rowcall.example/prefix/" }, Next: next,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Seen", r.Method+" "+r.Host+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization")+" "+fmt.Sprint(r.TLS != nil))
			w.WriteHeader(http.StatusCreated)
			w.Write(b)
		})}
	c := s.Client(&http.Client{})
	req, _ := http.NewRequest("PATCH", "https://rowcall.example:443/prefix/api/directory/K?x=1", strings.NewReader(`{"a":1}`))
	req.Header.Set("Authorization", "Bearer k")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 || string(body) != `{"a":1}` || res.Header.Get("X-Seen") != "PATCH rowcall.example:443 /api/directory/K?x=1 Bearer k true" {
		t.Fatalf("status %d, body %q, seen %q", res.StatusCode, body, res.Header.Get("X-Seen"))
	}
	if nextCalls != 0 {
		t.Fatal("an own-API call went to the network")
	}
	for _, u := range []string{"http://rowcall.example/prefix/api", "https://other.example/prefix/api", "https://rowcall.example/prefixed/api", "https://rowcall.example/api"} {
		if _, err := c.Get(u); err == nil || !strings.Contains(err.Error(), "network: "+u) {
			t.Errorf("%s: %v, want it sent to Next", u, err)
		}
	}
	if nextCalls != 4 {
		t.Fatalf("Next carried %d requests, want 4", nextCalls)
	}
}

// A handler that calls its own host again and again ends after MaxSelfDepth.
func TestSelfLoopEnds(t *testing.T) {
	s := &Self{Base: func(context.Context) string { return "http://127.0.0.1:9" }, Next: http.DefaultTransport}
	c := s.Client(&http.Client{})
	depth := 0
	s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		depth++
		req, _ := http.NewRequestWithContext(r.Context(), "GET", "http://127.0.0.1:9/again", nil)
		res, err := c.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusLoopDetected)
			return
		}
		defer res.Body.Close()
		w.WriteHeader(res.StatusCode)
		io.Copy(w, res.Body)
	})
	res, err := c.Get("http://127.0.0.1:9/start")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 508 || !strings.Contains(string(body), "more than 8 nested calls") || depth != MaxSelfDepth {
		t.Fatalf("status %d, depth %d, body %q", res.StatusCode, depth, body)
	}
}

// The body streams: the head arrives at the handler's first flush, and a
// reader that closes early ends the handler's writes.
func TestSelfStreams(t *testing.T) {
	more, done := make(chan struct{}), make(chan error, 1)
	s := &Self{Base: func(context.Context) string { return "http://h" }, Next: http.DefaultTransport,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "first")
			<-more
			var err error
			for err == nil {
				_, err = io.WriteString(w, "more")
			}
			done <- err
		})}
	res, err := s.Client(&http.Client{}).Get("http://h/stream")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(res.Body, buf); err != nil || string(buf) != "first" {
		t.Fatalf("read %q, %v", buf, err)
	}
	res.Body.Close()
	close(more)
	if err := <-done; !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("the handler's write after close: %v", err)
	}
}

// A panicking handler fails the call instead of the process.
func TestSelfHandlerPanic(t *testing.T) {
	s := &Self{Base: func(context.Context) string { return "http://h" }, Next: http.DefaultTransport,
		Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })}
	if _, err := s.Client(&http.Client{}).Get("http://h/x"); err == nil || !strings.Contains(err.Error(), "handler failed: boom") {
		t.Fatalf("err = %v", err)
	}
}
