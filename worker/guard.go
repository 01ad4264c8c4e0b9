package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall/internal/outbound"
)

// guard is the worker's outbound policy, applied to the URL of every request
// (every redirect hop included) before it is handed to fetch().
//
// A Worker cannot see the address a host name resolves to: fetch() resolves and
// connects inside the runtime, and the Go side never dials. So, unlike the
// local host (package outbound judges the resolved IP at dial time), the worker
// judges only what the URL says: an IP literal the host's policy refuses
// (outbound.Policy.Check: loopback, private, link-local, metadata, the IANA
// special-purpose ranges, …; see outbound.Classify) and the local names
// "localhost" and "*.localhost" are refused unless the operator allows them
// (ROWCALL_ALLOW_OUTBOUND, parsed by outbound.Parse). A public name that
// resolves to a private address is left to Cloudflare's own egress rules: on
// the edge, fetch() cannot reach the Worker's private networks or the
// machine's loopback in the first place. IPv4 literals are read the way
// fetch()'s URL parser reads them (127.1, 0x7f.0.0.1, 2130706433 and
// 0177.0.0.1 all mean 127.0.0.1), so a spelling trick does not slip past.
type guard struct {
	policy outbound.Policy
	next   http.RoundTripper
}

// refusedName is the refusal for a local host name.
type refusedName struct{ host string }

func (e *refusedName) Error() string {
	return fmt.Sprintf("outbound: %s is a local host name; rowcall refuses loopback, private, link-local and metadata addresses unless the operator allows them (ROWCALL_ALLOW_OUTBOUND=%s)", e.host, e.host)
}

// Refused marks the error as a policy refusal (see runners/httpcall).
func (e *refusedName) Refused() bool { return true }

// check returns a refusal error for u, or nil.
func (g guard) check(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("outbound: scheme %q is not http or https", u.Scheme)
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	for _, h := range g.policy.AllowHosts {
		if host == h {
			return nil
		}
	}
	port := uint16(80)
	if u.Scheme == "https" {
		port = 443
	}
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		port = uint16(p)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		var ok bool
		ip, ok = whatwgIPv4(host)
		if !ok {
			if host == "localhost" || strings.HasSuffix(host, ".localhost") {
				return &refusedName{host: host}
			}
			return nil // a name: left to Cloudflare's egress rules
		}
	}
	return g.policy.Check(netip.AddrPortFrom(ip, port))
}

// RoundTrip refuses what the policy refuses, and otherwise fetches (the
// worker's transport, fetchTransport, gives up when the request's context
// ends).
func (g guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.check(req.URL); err != nil {
		return nil, err
	}
	return g.next.RoundTrip(req)
}

// client returns the http.Client http rows use: guard over next, following
// redirects as the host does (outbound.CheckRedirect: at most
// outbound.MaxRedirects, no Referer, no credential or body past the first
// request's origin), each hop checked again by guard.
func client(policy outbound.Policy, next http.RoundTripper) *http.Client {
	return &http.Client{Transport: guard{policy: policy, next: next}, CheckRedirect: outbound.CheckRedirect}
}

var errNotIPv4 = errors.New("not an IPv4 literal")

// whatwgIPv4 parses host as the WHATWG URL standard's IPv4 parser does, which
// is what fetch() applies: one to four dot-separated parts, each decimal,
// octal (leading 0) or hexadecimal (0x), the last part filling the remaining
// bytes. It reports false when host is not an IPv4 literal in that sense.
func whatwgIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := whatwgNumber(p)
		if err != nil {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v |= n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func whatwgNumber(p string) (uint64, error) {
	if p == "" {
		return 0, errNotIPv4
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, nil
		}
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil || n > 1<<32 {
		return 0, errNotIPv4
	}
	return n, nil
}
