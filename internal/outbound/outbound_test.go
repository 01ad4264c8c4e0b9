package outbound

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	tests := []struct{ ip, class string }{
		{"127.0.0.1", "loopback"},
		{"127.9.9.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"64:ff9b::7f00:1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"169.254.169.254", "metadata"},
		{"fd00:ec2::254", "metadata"},
		{"100.64.0.1", "CGNAT (100.64.0.0/10)"},
		{"100.127.255.255", "CGNAT (100.64.0.0/10)"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "reserved"},
		{"8.8.8.8", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"2606:4700::1111", ""},
	}
	for _, tt := range tests {
		if got := Classify(netip.MustParseAddr(tt.ip)); got != tt.class {
			t.Errorf("Classify(%s) = %q, want %q", tt.ip, got, tt.class)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		allow   string
		hosts   string
		wantErr bool
	}{
		{"127.0.0.1/32", "[127.0.0.1/32]", "[]", false},
		{"127.0.0.1, 10.0.0.0/8 ::1", "[127.0.0.1/32 10.0.0.0/8 ::1/128]", "[]", false},
		{"10.1.2.3/8", "[10.0.0.0/8]", "[]", false},
		{"localhost,Internal.Example.", "[]", "[localhost internal.example]", false},
		{"", "[]", "[]", false},
		{"10.0.0.0/99", "", "", true},
		{"bad host!", "", "", true},
	}
	for _, tt := range tests {
		p, err := Parse(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("Parse(%q) err = %v", tt.in, err)
			continue
		}
		if err != nil {
			continue
		}
		if got := fmt.Sprint(p.Allow); got != tt.allow {
			t.Errorf("Parse(%q).Allow = %s, want %s", tt.in, got, tt.allow)
		}
		if got := fmt.Sprint(p.AllowHosts); got != tt.hosts {
			t.Errorf("Parse(%q).AllowHosts = %s, want %s", tt.in, got, tt.hosts)
		}
	}
}

func newServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestClientLoopback(t *testing.T) {
	srv, hits := newServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	localhostURL := fmt.Sprintf("http://localhost:%d/", port)
	allowLoop, _ := Parse("127.0.0.1/32")
	allowName, _ := Parse("localhost")
	tests := []struct {
		name    string
		policy  Policy
		url     string
		wantErr string
	}{
		{"refused by default", Policy{}, srv.URL,
			fmt.Sprintf("outbound: 127.0.0.1:%d is a loopback address; rowcall refuses loopback, private, link-local and metadata addresses unless the operator allows them (--allow-outbound 127.0.0.1/32)", port)},
		{"name resolving to loopback refused", Policy{}, localhostURL, "is a loopback address"},
		{"allowed by CIDR", allowLoop, srv.URL, ""},
		{"allowed by host name", allowName, localhostURL, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := hits.Load()
			body, err := get(tt.policy.Client(5*time.Second), tt.url)
			if tt.wantErr == "" {
				if err != nil || body != "ok" {
					t.Fatalf("got %q, %v", body, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			var re *RefusedError
			if !errors.As(err, &re) || !re.Refused() {
				t.Fatalf("err %v is not a *RefusedError", err)
			}
			if hits.Load() != before {
				t.Fatal("a refused request reached the server")
			}
		})
	}
}

func TestClientRedirects(t *testing.T) {
	allow, _ := Parse("127.0.0.1/32")
	var self string
	srv, hits := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/private":
			http.Redirect(w, r, "http://10.0.0.1:8080/", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, self+"/loop", http.StatusFound)
		case "/hop":
			http.Redirect(w, r, self+"/done", http.StatusFound)
		default:
			io.WriteString(w, "done")
		}
	})
	self = srv.URL
	tests := []struct {
		path, wantErr string
		wantHits      int64
	}{
		{"/metadata", "outbound: 169.254.169.254:80 is a metadata address", 1},
		{"/private", "outbound: 10.0.0.1:8080 is a private address", 1},
		{"/loop", "outbound: stopped after 5 redirects", 6},
		{"/hop", "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			before := hits.Load()
			body, err := get(allow.Client(5*time.Second), srv.URL+tt.path)
			if tt.wantErr == "" && (err != nil || body != "done") {
				t.Fatalf("got %q, %v", body, err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if n := hits.Load() - before; n != tt.wantHits {
				t.Fatalf("server hit %d times, want %d", n, tt.wantHits)
			}
		})
	}
}

func TestRefusedErrorIPv6(t *testing.T) {
	err := Policy{}.Check(netip.MustParseAddrPort("[::1]:443"))
	want := "outbound: [::1]:443 is a loopback address; rowcall refuses loopback, private, link-local and metadata addresses unless the operator allows them (--allow-outbound ::1/128)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v", err)
	}
	if err := (Policy{}).Check(netip.MustParseAddrPort("93.184.216.34:443")); err != nil {
		t.Fatalf("public address refused: %v", err)
	}
}

func TestAllowPortsIsExact(t *testing.T) {
	p := Policy{AllowPorts: []PortPrefix{Exact(netip.MustParseAddrPort("127.0.0.1:8787"))}}
	if err := p.Check(netip.MustParseAddrPort("127.0.0.1:8787")); err != nil {
		t.Fatalf("own address refused: %v", err)
	}
	for _, a := range []string{"127.0.0.1:8788", "127.0.0.2:8787", "10.0.0.1:8787"} {
		if err := p.Check(netip.MustParseAddrPort(a)); err == nil {
			t.Fatalf("%s allowed", a)
		}
	}
}
