// Package outbound is the host's outbound network policy: the HTTP client
// every runner that reaches another service is given.
//
// By default it refuses to connect to addresses that belong to the machine or
// its network rather than to the public internet:
//
//	unspecified      0.0.0.0/8, ::
//	loopback         127.0.0.0/8, ::1
//	private          10/8, 172.16/12, 192.168/16, fc00::/7
//	link-local       169.254/16, fe80::/10
//	metadata         169.254.169.254, fd00:ec2::254 (cloud instance metadata)
//	CGNAT            100.64.0.0/10
//	multicast        224.0.0.0/4, ff00::/8
//	reserved         240.0.0.0/4 (with 255.255.255.255)
//	special-purpose  the rest of the IANA IPv4 and IPv6 special-purpose
//	                 registries (192.0.0.0/24, 192.0.2.0/24, 198.18.0.0/15,
//	                 198.51.100.0/24, 203.0.113.0/24, 2001::/23, 2001:db8::/32,
//	                 2002::/16, …) and every IPv6 address outside global unicast
//	                 (2000::/3: fec0::/10, ::/96, …), as code.dny.dev/ssrf keeps them
//	local interface  the machine's own interface addresses (net.InterfaceAddrs,
//	                 read again at most every ownTTL), whatever their range
//
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) and NAT64 addresses
// (64:ff9b::/96) are judged by the IPv4 address they carry; IPv4-compatible
// (::a.b.c.d) and 6to4 (2002::/16) ones are refused, named after the IPv4
// address they carry (see Classify).
//
// The check runs on the resolved IP at dial time (net.Dialer.ControlContext),
// after DNS, for every connection attempt, so a name that resolves to a
// public address for one lookup and to 127.0.0.1 for the next (DNS
// rebinding) is still refused, and so is every hop of a redirect. The client
// never uses an environment proxy (a proxy would make the dial check judge
// the proxy, not the target).
//
// Redirects follow CheckRedirect, which the Cloudflare worker's client uses
// too: at most MaxRedirects hops, http and https only, no Referer, and once a
// hop leaves the first request's origin (scheme, host and port) no header but
// User-Agent and Accept* and no body (a 307/308 re-post goes out empty).
//
// The operator opens holes with Policy.Allow (CIDRs, e.g. 127.0.0.1/32 for a
// local test upstream, on every port), Policy.AllowPorts (a CIDR on one port,
// 127.0.0.1:9000) and Policy.AllowHosts (host names trusted whatever they
// resolve to); Parse reads all three from one flag value.
//
// Policy.Client is the client to hand the runners. Wrap it with Self, whose
// Client serves requests under the host's own base URL ($SELF) in-process.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MaxRedirects is how many redirects a policy client follows.
const MaxRedirects = 5

// Policy decides which addresses outbound connections may reach. The zero
// Policy refuses every class listed in the package doc and allows the rest.
type Policy struct {
	Allow      []netip.Prefix // refused-class addresses the operator allows anyway, on every port
	AllowPorts []PortPrefix   // refused-class addresses allowed on one port (127.0.0.1:9000; the host's own API)
	AllowHosts []string       // host names allowed whatever they resolve to (exact, case-insensitive)
}

// PortPrefix is a prefix allowed on one port.
type PortPrefix struct {
	Prefix netip.Prefix
	Port   uint16
}

// Exact is the PortPrefix of one address and port.
func Exact(ap netip.AddrPort) PortPrefix {
	ip := ap.Addr().WithZone("")
	return PortPrefix{netip.PrefixFrom(ip, ip.BitLen()), ap.Port()}
}

// Trusting returns p with the servers at urls let through, whatever class
// their address is of: an address literal on its port alone, a host name by
// name. It is for servers the operator named in a setting (a model provider,
// the OpenID provider people sign in with), so that one on loopback or a
// private network is reachable by what talks to it without opening it to
// http rows. A URL that does not parse is skipped.
func (p Policy) Trusting(urls ...string) Policy {
	p.AllowPorts = slices.Clone(p.AllowPorts)
	p.AllowHosts = slices.Clone(p.AllowHosts)
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			continue
		}
		host := u.Hostname()
		if ip, err := netip.ParseAddr(host); err == nil {
			port := u.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
			}
			if n, err := strconv.ParseUint(port, 10, 16); err == nil {
				p.AllowPorts = append(p.AllowPorts, Exact(netip.AddrPortFrom(ip, uint16(n))))
			}
			continue
		}
		p.AllowHosts = append(p.AllowHosts, strings.ToLower(host))
	}
	return p
}

// String writes pp as Parse reads it: 127.0.0.1:9000, 10.0.0.0/8:9000,
// [::1]:9000, [fd00::/8]:9000.
func (pp PortPrefix) String() string {
	host := pp.Prefix.String()
	if pp.Prefix.IsSingleIP() {
		host = pp.Prefix.Addr().String()
	}
	return net.JoinHostPort(host, strconv.Itoa(int(pp.Port)))
}

// RefusedError is the error a refused dial returns (wrapped in a *net.OpError
// and a *url.Error by net/http).
type RefusedError struct {
	Addr  netip.AddrPort
	Class string // "loopback", "private", "link-local", "metadata", …
}

func (e *RefusedError) Error() string {
	bits := 32
	if e.Addr.Addr().Is6() {
		bits = 128
	}
	return fmt.Sprintf("outbound: %s is %s address; rowcall refuses loopback, private, link-local and metadata addresses unless the operator allows them (--allow-outbound %s/%d)",
		e.Addr, article(e.Class), e.Addr.Addr(), bits)
}

// Refused marks the error as a policy refusal for callers that cannot import
// this package (they test for interface{ Refused() bool }).
func (e *RefusedError) Refused() bool { return true }

func article(class string) string {
	if strings.IndexByte("aeiou", class[0]) >= 0 {
		return "an " + class
	}
	return "a " + class
}

// Check returns a *RefusedError when addr may not be reached, nil when it may.
func (p Policy) Check(addr netip.AddrPort) error {
	raw := addr.Addr().WithZone("")
	ip := judged(raw)
	for _, a := range p.AllowPorts {
		if a.Port == addr.Port() && (a.Prefix.Contains(raw) || a.Prefix.Contains(ip)) {
			return nil
		}
	}
	for _, pre := range p.Allow {
		if pre.Contains(raw) || pre.Contains(ip) {
			return nil
		}
	}
	class := Classify(raw)
	if class == "" && own.has(ip) {
		class = "local interface"
	}
	if class != "" {
		return &RefusedError{Addr: netip.AddrPortFrom(raw, addr.Port()), Class: class}
	}
	return nil
}

// ownTTL is how long the machine's interface addresses are trusted before
// they are read again (one netlink dump: about 0.1 ms, BenchmarkCheck/reread).
const ownTTL = 5 * time.Second

// interfaceAddrs lists the machine's addresses; tests replace it.
var interfaceAddrs = net.InterfaceAddrs

// own is the machine's interface addresses, read on the first check and again
// on the first check after ownTTL.
var own ownAddrs

type ownAddrs struct {
	mu    sync.Mutex
	read  time.Time
	addrs map[netip.Addr]bool
}

func (o *ownAddrs) has(ip netip.Addr) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.addrs == nil || time.Since(o.read) > ownTTL {
		o.addrs = map[netip.Addr]bool{}
		list, _ := interfaceAddrs() // none (js/wasm, an error): only the ranges apply
		for _, a := range list {
			var ip net.IP
			switch a := a.(type) {
			case *net.IPNet:
				ip = a.IP
			case *net.IPAddr:
				ip = a.IP
			}
			if v, ok := netip.AddrFromSlice(ip); ok {
				o.addrs[v.Unmap()] = true
			}
		}
		o.read = time.Now()
	}
	return o.addrs[ip]
}

// Control is a net.Dialer ControlContext that applies the policy to the
// address being dialled (always a resolved IP).
func (p Policy) Control(_ context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: cannot judge dial address %q: %w", address, err)
	}
	return p.Check(ap)
}

// DialContext dials through the policy: a host in AllowHosts is dialled
// unchecked, anything else is checked on every resolved address tried.
func (p Policy) DialContext(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	checked := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, ControlContext: p.Control}
	open := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(addr); err == nil && p.hostAllowed(host) {
			return open.DialContext(ctx, network, addr)
		}
		return checked.DialContext(ctx, network, addr)
	}
}

func (p Policy) hostAllowed(host string) bool {
	for _, h := range p.AllowHosts {
		if strings.EqualFold(strings.TrimSuffix(h, "."), strings.TrimSuffix(host, ".")) {
			return true
		}
	}
	return false
}

// Transport returns an http.Transport that dials through the policy and
// ignores proxy environment variables.
func (p Policy) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           p.DialContext(10 * time.Second),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// ErrTooManyRedirects is returned (wrapped) when a response chain exceeds
// MaxRedirects.
var ErrTooManyRedirects = fmt.Errorf("outbound: stopped after %d redirects", MaxRedirects)

// Client returns an http.Client that dials through the policy, follows
// redirects by CheckRedirect (each hop dialled through the same check) and
// gives up after timeout (0: no client-level timeout; the caller's context
// still applies).
func (p Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: p.Transport(), Timeout: timeout, CheckRedirect: CheckRedirect}
}

// CheckRedirect is the redirect policy of every outbound client (an
// http.Client.CheckRedirect): it stops after MaxRedirects hops or at a scheme
// other than http and https, never sends Referer (it would carry a query
// credential), and once any hop has left the origin (scheme, host and port)
// of the first request it strips the redirected request to what cannot carry
// a credential: no header but User-Agent and Accept*, and no body (a 307/308
// re-post goes out empty). A redirect within the origin keeps both. The
// destination's address is judged as every request's is, by the dialer (or,
// on the worker, by its guard).
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return ErrTooManyRedirects
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return errors.New("outbound: redirect to unsupported scheme " + req.URL.Scheme)
	}
	req.Header.Del("Referer")
	first := origin(via[0].URL)
	left := origin(req.URL) != first
	for _, r := range via[1:] {
		left = left || origin(r.URL) != first
	}
	if !left {
		return nil
	}
	// net/http copies the first request's headers onto every hop (dropping
	// only Authorization and cookies, and only for another host name), and
	// re-reads its body for a 307 or 308.
	for name := range req.Header {
		if c := http.CanonicalHeaderKey(name); c != "User-Agent" && !strings.HasPrefix(c, "Accept") {
			delete(req.Header, name)
		}
	}
	if req.Body != nil {
		req.Body.Close()
	}
	req.Body, req.GetBody, req.ContentLength = nil, nil, 0
	return nil
}

// origin is a URL's origin as RFC 6454 compares it, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")) + ":" + port
}
