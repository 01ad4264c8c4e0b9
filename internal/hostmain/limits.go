package hostmain

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// limits are the serve flags that bound what one connection may hold: how long
// it may sit idle, take to send a request, or take to be answered, and how many
// connections are open at once.
type limits struct {
	maxConns                    int
	idle, read, write, callTime time.Duration
}

// Default limits; docs/operating.md, "Commands", lists them.
const (
	DefaultMaxConns     = 512
	DefaultIdleTimeout  = 60 * time.Second
	DefaultReadTimeout  = 30 * time.Second
	DefaultWriteTimeout = 60 * time.Second
	DefaultCallTimeout  = 10 * time.Minute
	headerTimeout       = 10 * time.Second // at most; never more than --read-timeout
)

func limitFlags(fs *flag.FlagSet) *limits {
	l := &limits{}
	fs.IntVar(&l.maxConns, "max-conns", DefaultMaxConns, "most connections open at once; more wait to be accepted. Keep it under the open-file limit")
	fs.DurationVar(&l.idle, "idle-timeout", DefaultIdleTimeout, "close a keep-alive connection idle this long")
	fs.DurationVar(&l.read, "read-timeout", DefaultReadTimeout, "longest a request's body may take to arrive (its headers: 10s at most)")
	fs.DurationVar(&l.write, "write-timeout", DefaultWriteTimeout, "longest an API answer may take (calls and MCP have --call-timeout)")
	fs.DurationVar(&l.callTime, "call-timeout", DefaultCallTimeout, "longest a call's answer may take (/api/dispatch, MCP requests); must outlast the slowest row, flows in turn; MCP's notification stream has none")
	return l
}

// check refuses limits that would cut every call short.
func (l *limits) check(fnTimeout time.Duration) error {
	if l.maxConns < 1 {
		return fmt.Errorf("--max-conns must be at least 1")
	}
	for _, d := range []time.Duration{l.idle, l.read, l.write, l.callTime} {
		if d <= 0 {
			return fmt.Errorf("the timeouts must be positive")
		}
	}
	if l.callTime <= fnTimeout {
		return fmt.Errorf("--call-timeout %s must outlast --fn-timeout %s", l.callTime, fnTimeout)
	}
	return nil
}

// server serves h on ln within the limits.
func (l *limits) server(h http.Handler, ln net.Listener) (*http.Server, net.Listener) {
	srv := &http.Server{
		Handler:           l.deadlines(h),
		ReadHeaderTimeout: min(headerTimeout, l.read),
		IdleTimeout:       l.idle,
		// No ReadTimeout or WriteTimeout: they would be the same for every
		// route; deadlines sets them per request.
	}
	return srv, netutil.LimitListener(ln, l.maxConns)
}

// deadlines sets each request's connection deadlines: its body must arrive
// within --read-timeout, and its answer be written within --write-timeout, or
// --call-timeout for a call, or without limit for MCP's notification stream
// (GET /mcp, which lasts its session).
func (l *limits) deadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		var write time.Time
		switch {
		case r.URL.Path == "/mcp" && r.Method == http.MethodGet:
		case r.URL.Path == "/api/dispatch" || r.URL.Path == "/mcp":
			write = time.Now().Add(l.callTime)
		default:
			write = time.Now().Add(l.write)
		}
		rc.SetWriteDeadline(write)
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			// net/http lifts it once the body is read (to the end), so a long call
			// is not cut short by it.
			rc.SetReadDeadline(time.Now().Add(l.read))
		}
		next.ServeHTTP(w, r)
	})
}
