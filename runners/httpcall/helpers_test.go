package httpcall

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
)

// seen is what an upstream received.
type seen struct {
	Method, Path, RawQuery, Body string
	Header                       http.Header
}

// upstream is a loopback server that records what it receives and answers
// with h (or 200 "ok").
type upstream struct {
	*httptest.Server
	hits atomic.Int64
	mu   sync.Mutex
	last seen
}

func newUpstream(t testing.TB, h http.HandlerFunc) *upstream {
	return newUpstreamOn(t, "127.0.0.1:0", h)
}

// newUpstreamOn is newUpstream listening on addr (127.0.0.2:0: another
// loopback address, which Linux answers on all of 127/8).
func newUpstreamOn(t testing.TB, addr string, h http.HandlerFunc) *upstream {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.last = seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, string(b), r.Header.Clone()}
		u.mu.Unlock()
		if h == nil {
			io.WriteString(w, "ok")
			return
		}
		h(w, r)
	}))
	u.Listener.Close()
	u.Listener = l
	u.Start()
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) seen() seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.last
}

// env is a fixed environment.
type env map[string]string

func (e env) Lookup(name string) (string, bool) { v, ok := e[name]; return v, ok }

func httpRow(key, target, auth, content string) *rowcall.Row {
	r := rowcall.NewRow(key, rowcall.TypeHTTP)
	r.Target, r.Auth, r.Content = target, auth, content
	return &r
}

func invoke(r *Runner, row *rowcall.Row, body string, e env, shape bool) rowcall.Output {
	return r.Run(context.Background(), &rowcall.Invocation{
		Row: row, Body: body, Args: args.Split(body), Env: e, Shape: shape,
	})
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
