// Package outbound is the host's outbound network policy: the HTTP client
// every runner that reaches another service is given.
//
// By default it refuses to connect to addresses that belong to the machine or
// its network rather than to the public internet:
//
//	unspecified  0.0.0.0/8, ::
//	loopback     127.0.0.0/8, ::1
//	private      10/8, 172.16/12, 192.168/16, fc00::/7
//	link-local   169.254/16, fe80::/10
//	metadata     169.254.169.254, fd00:ec2::254 (cloud instance metadata)
//	CGNAT        100.64.0.0/10
//	multicast    224.0.0.0/4, ff00::/8
//	reserved     240.0.0.0/4 (with 255.255.255.255)
//
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) and NAT64 addresses
// (64:ff9b::/96) are judged by the IPv4 address they carry.
//
// The check runs on the resolved IP at dial time (net.Dialer.ControlContext),
// after DNS, for every connection attempt, so a name that resolves to a
// public address for one lookup and to 127.0.0.1 for the next (DNS
// rebinding) is still refused, and so is every hop of a redirect. The client
// follows at most MaxRedirects redirects and never uses an environment proxy
// (a proxy would make the dial check judge the proxy, not the target).
//
// The operator opens holes with Policy.Allow (CIDRs, e.g. 127.0.0.1/32 for a
// local test upstream) and Policy.AllowHosts (host names trusted whatever they
// resolve to); Parse reads both from one flag value.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// MaxRedirects is how many redirects a policy client follows.
const MaxRedirects = 5

// Policy decides which addresses outbound connections may reach. The zero
// Policy refuses every class listed in the package doc and allows the rest.
type Policy struct {
	Allow      []netip.Prefix   // refused-class addresses the operator allows anyway
	AllowHosts []string         // host names allowed whatever they resolve to (exact, case-insensitive)
	AllowAddrs []netip.AddrPort // exact address and port allowed (the host's own API, for rows that call it)
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
	ip := addr.Addr().WithZone("")
	for _, a := range p.AllowAddrs {
		if a.Port() == addr.Port() && a.Addr().Unmap() == ip.Unmap() {
			return nil
		}
	}
	for _, pre := range p.Allow {
		if pre.Contains(ip) || pre.Contains(ip.Unmap()) {
			return nil
		}
	}
	if class := Classify(ip); class != "" {
		return &RefusedError{Addr: netip.AddrPortFrom(ip, addr.Port()), Class: class}
	}
	return nil
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

// Client returns an http.Client that dials through the policy, follows at most
// MaxRedirects redirects (each through the same check) and gives up after
// timeout (0: no client-level timeout; the caller's context still applies).
func (p Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: p.Transport(),
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return ErrTooManyRedirects
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return errors.New("outbound: redirect to unsupported scheme " + req.URL.Scheme)
			}
			return nil
		},
	}
}
