package httpcall

import (
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/outbound"
)

// The host's real outbound dialer in front of the runner.
func TestOutboundPolicy(t *testing.T) {
	var up *upstream
	up = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/", http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+port(up.URL)+"/ok", http.StatusFound)
		default:
			w.Write([]byte("ok"))
		}
	})
	allow, err := outbound.Parse("127.0.0.1/32")
	if err != nil {
		t.Fatal(err)
	}
	const refusal = " is a loopback address; rowcall refuses loopback, private, link-local and metadata addresses unless the operator allows them (--allow-outbound 127.0.0.1/32)"
	addr := up.Listener.Addr().String()
	tests := []struct {
		name   string
		policy outbound.Policy
		path   string
		want   string
		hits   int64
	}{
		{"loopback refused by default", outbound.Policy{}, "/ok",
			"ERR:http:fetch:outbound: " + addr + refusal, 0},
		{"allowed by the operator", allow, "/ok", "HTTP 200:ok", 1},
		{"redirect to metadata refused", allow, "/to-metadata",
			"ERR:http:fetch:outbound: 169.254.169.254:80 is a metadata address; rowcall refuses loopback, private, link-local and metadata addresses unless the operator allows them (--allow-outbound 169.254.169.254/32)", 1},
		{"redirect through a name to an allowed IP", allow, "/to-localhost", "HTTP 200:ok", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(Config{Client: tt.policy.Client(0), Timeout: 5 * time.Second})
			before := up.hits.Load()
			out := invoke(r, httpRow("ROW", "GET "+up.URL+tt.path, "bearer:K", ""), "", env{"K": "tok-abcdef"}, false)
			if out.Result != tt.want {
				t.Fatalf("Result = %q\nwant     %q", out.Result, tt.want)
			}
			if n := up.hits.Load() - before; n != tt.hits {
				t.Fatalf("upstream hit %d times, want %d", n, tt.hits)
			}
		})
	}
}

func port(rawURL string) string {
	_, p, _ := net.SplitHostPort(rawURL[len("http://"):])
	if _, err := strconv.Atoi(p); err != nil {
		panic(rawURL)
	}
	return p
}
