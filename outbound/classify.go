package outbound

import "net/netip"

// ranges are the refused classes, most specific first: the metadata
// addresses sit inside link-local and private space and are named as such.
var ranges = []struct {
	class    string
	prefixes []netip.Prefix
}{
	{"metadata", prefixes("169.254.169.254/32", "fd00:ec2::254/128")},
	{"unspecified", prefixes("0.0.0.0/8", "::/128")},
	{"loopback", prefixes("127.0.0.0/8", "::1/128")},
	{"private", prefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")},
	{"link-local", prefixes("169.254.0.0/16", "fe80::/10")},
	{"CGNAT (100.64.0.0/10)", prefixes("100.64.0.0/10")},
	{"multicast", prefixes("224.0.0.0/4", "ff00::/8")},
	{"reserved", prefixes("240.0.0.0/4")},
}

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

func prefixes(list ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(list))
	for i, s := range list {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Classify names the refused class ip belongs to ("loopback", "private",
// "link-local", "metadata", "unspecified", "CGNAT (100.64.0.0/10)",
// "multicast", "reserved"), or returns "" for an address the default policy
// allows. IPv4-mapped and NAT64 IPv6 addresses are judged by their IPv4 part.
func Classify(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	if !ip.IsValid() {
		return "invalid"
	}
	for _, r := range ranges {
		for _, p := range r.prefixes {
			if p.Contains(ip) {
				return r.class
			}
		}
	}
	return ""
}
