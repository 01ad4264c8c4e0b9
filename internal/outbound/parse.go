package outbound

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Parse reads an allow-list, as --allow-outbound and the worker's
// ROWCALL_ALLOW_OUTBOUND give it, into a Policy. Entries are separated by
// commas or white space, each one of:
//
//	127.0.0.1  10.0.0.0/8  ::1  fd00::/8              an IP (its /32 or /128) or a CIDR, every port
//	127.0.0.1:9000  10.0.0.0/8:9000                   the same on one port
//	[::1]:9000  [fd00::/8]:9000                       (IPv6 in brackets)
//	localhost  internal.example                       a host name, whatever it resolves to
func Parse(list string) (Policy, error) {
	var p Policy
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if pre, ok := parsePrefix(f); ok {
			p.Allow = append(p.Allow, pre)
			continue
		}
		if pp, ok, err := parsePortPrefix(f); ok {
			if err != nil {
				return Policy{}, err
			}
			p.AllowPorts = append(p.AllowPorts, pp)
			continue
		}
		if strings.ContainsAny(f, "/:[]") || !validHost(f) {
			return Policy{}, fmt.Errorf("outbound: %q is not an IP, a CIDR, IP:port, CIDR:port or a host name", f)
		}
		p.AllowHosts = append(p.AllowHosts, strings.ToLower(strings.TrimSuffix(f, ".")))
	}
	return p, nil
}

// parsePrefix reads a CIDR or a bare IP (as its /32 or /128).
func parsePrefix(s string) (netip.Prefix, bool) {
	if pre, err := netip.ParsePrefix(s); err == nil {
		return pre.Masked(), true
	}
	if ip, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(ip, ip.BitLen()), true
	}
	return netip.Prefix{}, false
}

// parsePortPrefix reads IP:port, CIDR:port, [IPv6]:port or [IPv6/n]:port. ok
// is false when s does not have that form; err tells what is wrong with one
// that does.
func parsePortPrefix(s string) (pp PortPrefix, ok bool, err error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return pp, false, nil
	}
	host, port := s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
		if !strings.Contains(host, ":") {
			return pp, false, nil // brackets are for IPv6
		}
	} else if strings.Contains(host, ":") {
		return pp, false, nil // an unbracketed IPv6 address has no port
	}
	pre, isPrefix := parsePrefix(host)
	if !isPrefix {
		return pp, false, nil
	}
	n, perr := strconv.ParseUint(port, 10, 16)
	if perr != nil || n == 0 {
		return pp, true, fmt.Errorf("outbound: %q: the port must be a number from 1 to 65535", s)
	}
	return PortPrefix{Prefix: pre, Port: uint16(n)}, true, nil
}

func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r == '-' || r == '.' || r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}
