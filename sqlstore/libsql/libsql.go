// Package libsql opens rowcall's database on a libSQL server (sqld, Turso) over
// HTTP, through github.com/tursodatabase/libsql-client-go (driver name
// "libsql"; its Hrana-over-HTTP protocol, POST /v2/pipeline).
//
// URLs are libsql://host[:port], https://host[:port] or http://host:port. A
// libsql:// URL means TLS unless it carries ?tls=0. The auth token (a Turso
// database token, or a JWT that sqld is configured to accept) comes from
// ?authToken=… in the URL or, better, from $ROWCALL_DB_AUTH_TOKEN.
//
// The *sql.DB that Open returns survives the server forgetting its streams
// (idle expiry after about 10 s, a restart): each connection, pooled or held
// with DB.Conn, starts a new stream when its own is refused or has idled past
// StreamIdle (see connector). Statements inside a transaction are never sent
// again.
//
// Do not link github.com/tursodatabase/go-libsql into the same program: it
// registers the driver name "libsql" too, and the program panics at start.
package libsql

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/tursodatabase/libsql-client-go/libsql"
)

// TokenEnv is the environment variable Open reads the auth token from.
const TokenEnv = "ROWCALL_DB_AUTH_TOKEN"

// IsURL reports whether s names a libSQL server rather than a file.
func IsURL(s string) bool {
	for _, p := range []string{"libsql://", "http://", "https://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return true
		}
	}
	return false
}

// Open opens the database at the server rawURL names and checks that it
// answers.
func Open(ctx context.Context, rawURL string) (*sql.DB, error) {
	u, err := url.Parse(rawURL)
	if err != nil || !IsURL(rawURL) || u.Host == "" {
		return nil, fmt.Errorf("--db %s: want libsql://HOST, https://HOST or http://HOST:PORT", Redact(rawURL))
	}
	q := u.Query()
	var opts []libsql.Option
	token := q.Get("authToken")
	q.Del("authToken")
	if token == "" {
		token = os.Getenv(TokenEnv)
	}
	if token != "" {
		opts = append(opts, libsql.WithAuthToken(token))
	}
	if q.Has("tls") {
		opts = append(opts, libsql.WithTls(q.Get("tls") != "0"))
		q.Del("tls")
	}
	u.RawQuery = q.Encode()
	conn, err := libsql.NewConnector(u.String(), opts...)
	if err != nil {
		return nil, fmt.Errorf("--db %s: %w", Redact(rawURL), err)
	}
	db := sql.OpenDB(connector{conn})
	// Each connection holds a server-side stream that the server expires when
	// it idles; do not keep idle ones long (the connections renew their stream
	// anyway: connector).
	db.SetConnMaxIdleTime(StreamIdle)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("--db %s: %w", Redact(rawURL), err)
	}
	return db, nil
}

// Redact returns rawURL without its auth token and password, for messages.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparseable URL)"
	}
	q := u.Query()
	if q.Has("authToken") {
		q.Set("authToken", "REDACTED")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

var localhostOnce sync.Once

// ResolveLocalhost makes http.DefaultTransport, which the client sends its
// requests through, dial a name under .localhost (acme.localhost:8080) at the
// loopback address, as RFC 6761 section 6.3 says such names are: sqld finds a
// namespace from the first label of the host name, so on one machine a
// namespace's URL is http://NAME.localhost:PORT. Go's resolver asks DNS for
// those names, which does not know them.
func ResolveLocalhost() {
	localhostOnce.Do(func() {
		t, ok := http.DefaultTransport.(*http.Transport)
		if !ok {
			return
		}
		dial := t.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, port, err := net.SplitHostPort(addr); err == nil && strings.HasSuffix(strings.ToLower(strings.TrimSuffix(host, ".")), ".localhost") {
				addr = net.JoinHostPort("127.0.0.1", port)
			}
			return dial(ctx, network, addr)
		}
	})
}
