package outbound

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// Every special-purpose range the classifier once allowed, and the IPv6 forms of an IPv4 address.
func TestClassifySpecialPurpose(t *testing.T) {
	tests := []struct{ ip, class string }{
		{"192.0.0.8", "special-purpose (192.0.0.0/24)"},
		{"192.0.2.1", "special-purpose (192.0.2.0/24)"},
		{"198.18.0.1", "special-purpose (198.18.0.0/15)"},
		{"198.19.255.254", "special-purpose (198.18.0.0/15)"},
		{"198.51.100.7", "special-purpose (198.51.100.0/24)"},
		{"203.0.113.9", "special-purpose (203.0.113.0/24)"},
		{"192.88.99.1", "special-purpose (192.88.99.0/24)"},
		{"2001:db8::1", "special-purpose (2001:db8::/32)"},
		{"2001::1", "special-purpose (2001::/23)"},
		{"3fff::1", "special-purpose (3fff::/20)"},
		{"::8.8.8.8", "special-purpose (outside 2000::/3)"}, // IPv4-compatible, ::/96
		{"::127.0.0.1", "loopback"},
		{"::10.0.0.1", "private"},
		{"2002:c0a8:101::1", "private"}, // 6to4 of 192.168.1.1
		{"2002:7f00:1::", "loopback"},   // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe::1", "metadata"},
		{"2002:808:808::1", "special-purpose (2002::/16)"}, // 6to4 of a public address
		{"fec0::1", "special-purpose (outside 2000::/3)"},  // site-local, deprecated
		{"64:ff9b:1::1", "special-purpose (outside 2000::/3)"},
		{"100::1", "special-purpose (outside 2000::/3)"}, // discard-only
		{"64:ff9b::c000:201", "special-purpose (192.0.2.0/24)"},
		{"::ffff:198.18.0.1", "special-purpose (198.18.0.0/15)"},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of a public address: the IPv4 decides
		{"2606:4700::1111", ""},
		{"2a00:1450:4001::200e", ""},
		{"2001:4860:4860::8888", ""}, // outside 2001::/23
		{"1.1.1.1", ""},
		{"192.0.3.1", ""},
		{"198.20.0.1", ""},
	}
	for _, tt := range tests {
		if got := Classify(netip.MustParseAddr(tt.ip)); got != tt.class {
			t.Errorf("Classify(%s) = %q, want %q", tt.ip, got, tt.class)
		}
	}
	err := Policy{}.Check(netip.MustParseAddrPort("[::127.0.0.1]:80"))
	if err == nil || err.Error() != "outbound: [::7f00:1]:80 is a loopback address; rowcall refuses loopback, private, link-local and metadata addresses unless the operator allows them (--allow-outbound ::7f00:1/128)" {
		t.Fatalf("Check(::127.0.0.1) = %v", err)
	}
}

func TestParsePorts(t *testing.T) {
	tests := []struct{ in, allow, ports, err string }{
		{"127.0.0.1:9000", "[]", "[127.0.0.1:9000]", ""},
		{"10.0.0.0/8:443, 127.0.0.1/32", "[127.0.0.1/32]", "[10.0.0.0/8:443]", ""},
		{"[::1]:9000 [fd00::/8]:53", "[]", "[[::1]:9000 [fd00::/8]:53]", ""},
		{"::1", "[::1/128]", "[]", ""}, // an unbracketed IPv6 address is every port
		{"127.0.0.1:0", "", "", `outbound: "127.0.0.1:0": the port must be a number from 1 to 65535`},
		{"127.0.0.1:70000", "", "", `outbound: "127.0.0.1:70000": the port must be a number from 1 to 65535`},
		{"127.0.0.1:x", "", "", `outbound: "127.0.0.1:x": the port must be a number from 1 to 65535`},
		{"localhost:9000", "", "", `outbound: "localhost:9000" is not an IP, a CIDR, IP:port, CIDR:port or a host name`},
		{"[127.0.0.1]:9000", "", "", `outbound: "[127.0.0.1]:9000" is not an IP, a CIDR, IP:port, CIDR:port or a host name`},
	}
	for _, tt := range tests {
		p, err := Parse(tt.in)
		if fmt.Sprint(err) != tt.err && !(err == nil && tt.err == "") {
			t.Errorf("Parse(%q) err = %v, want %s", tt.in, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		if got := fmt.Sprint(p.Allow); got != tt.allow {
			t.Errorf("Parse(%q).Allow = %s, want %s", tt.in, got, tt.allow)
		}
		if got := fmt.Sprint(p.AllowPorts); got != tt.ports {
			t.Errorf("Parse(%q).AllowPorts = %s, want %s", tt.in, got, tt.ports)
		}
	}
}

// A port-scoped entry opens that port of the address and no other.
func TestAllowPort(t *testing.T) {
	open, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	closed, hits := newServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	p, err := Parse("127.0.0.1:" + port(t, open.URL))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Client(5 * time.Second)
	if body, err := get(c, open.URL); err != nil || body != "ok" {
		t.Fatalf("the allowed port: %q, %v", body, err)
	}
	_, err = get(c, closed.URL)
	want := "outbound: " + closed.Listener.Addr().String() + " is a loopback address"
	if err == nil || !strings.Contains(err.Error(), want) || hits.Load() != 0 {
		t.Fatalf("another port: %v (%d hits), want %q", err, hits.Load(), want)
	}
}

func port(t *testing.T, rawURL string) string {
	_, p, err := net.SplitHostPort(strings.TrimPrefix(rawURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The machine's own addresses are refused whatever their range.
func TestOwnAddresses(t *testing.T) {
	real := interfaceAddrs
	reset := func(f func() ([]net.Addr, error)) {
		own.mu.Lock()
		interfaceAddrs, own.addrs = f, nil
		own.mu.Unlock()
	}
	t.Cleanup(func() { reset(real) })

	list, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		ip, _ := netip.AddrFromSlice(a.(*net.IPNet).IP)
		if err := (Policy{}).Check(netip.AddrPortFrom(ip.Unmap(), 80)); err == nil {
			t.Errorf("this machine's own %s is allowed", ip)
		}
	}

	// A public address on an interface (a VPS's eth0).
	reset(func() ([]net.Addr, error) {
		return []net.Addr{&net.IPNet{IP: net.ParseIP("8.8.4.4"), Mask: net.CIDRMask(24, 32)}}, nil
	})
	err = Policy{}.Check(netip.MustParseAddrPort("8.8.4.4:8787"))
	want := "outbound: 8.8.4.4:8787 is a local interface address; rowcall refuses loopback, private, link-local and metadata addresses unless the operator allows them (--allow-outbound 8.8.4.4/32)"
	if err == nil || err.Error() != want {
		t.Fatalf("own public address: %v", err)
	}
	if err := (Policy{}).Check(netip.MustParseAddrPort("[::ffff:8.8.4.4]:8787")); err == nil {
		t.Fatal("own address allowed in its IPv4-mapped form")
	}
	if err := (Policy{}).Check(netip.MustParseAddrPort("8.8.4.5:8787")); err != nil {
		t.Fatalf("a neighbour on the interface's network refused: %v", err)
	}
	allow, _ := Parse("8.8.4.4:8787")
	if err := allow.Check(netip.MustParseAddrPort("8.8.4.4:8787")); err != nil {
		t.Fatalf("allowed own address refused: %v", err)
	}
}

// Once a chain has left the first request's origin it stays stripped, also
// when another origin sends it back: that origin chose the URL.
func TestCheckRedirectStaysStripped(t *testing.T) {
	var back string
	var landed http.Header
	a, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, back, http.StatusTemporaryRedirect)
		default:
			landed = r.Header.Clone()
		}
	})
	b, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, a.URL+"/landed", http.StatusTemporaryRedirect)
	})
	back = b.URL + "/bounce"
	allow, _ := Parse("127.0.0.1/32")
	req, _ := http.NewRequest("GET", a.URL+"/start", nil)
	req.Header.Set("X-Api-Key", "sk-h")
	req.Header.Set("User-Agent", "rowcall-test")
	resp, err := allow.Client(5 * time.Second).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if landed.Get("X-Api-Key") != "" || landed.Get("Referer") != "" || landed.Get("User-Agent") != "rowcall-test" {
		t.Fatalf("back at the first origin through another: %v", landed)
	}
}
