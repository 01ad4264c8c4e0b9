package outbound

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseAllow reads a list of CIDRs and bare IPs (a bare IP is its /32 or
// /128), separated by commas or white space, as the --allow-outbound flag
// gives it. It refuses host names; Parse accepts them.
func ParseAllow(list string) ([]netip.Prefix, error) {
	p, err := Parse(list)
	if err != nil {
		return nil, err
	}
	if len(p.AllowHosts) > 0 {
		return nil, fmt.Errorf("outbound: %q is not an IP or CIDR", p.AllowHosts[0])
	}
	return p.Allow, nil
}

// Parse reads an allow-list of CIDRs, bare IPs and host names, separated by
// commas or white space, into a Policy.
func Parse(list string) (Policy, error) {
	var p Policy
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if pre, err := netip.ParsePrefix(f); err == nil {
			p.Allow = append(p.Allow, pre.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(f); err == nil {
			p.Allow = append(p.Allow, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		if strings.Contains(f, "/") || !validHost(f) {
			return Policy{}, fmt.Errorf("outbound: %q is not an IP, a CIDR or a host name", f)
		}
		p.AllowHosts = append(p.AllowHosts, strings.ToLower(strings.TrimSuffix(f, ".")))
	}
	return p, nil
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
