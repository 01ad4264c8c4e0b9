package outbound

import (
	"net/netip"

	"code.dny.dev/ssrf"
)

// ranges are the refused classes with a name of their own, most specific
// first: the metadata addresses sit inside link-local and private space and
// are named as such. Everything else the IANA special-purpose registries set
// aside is refused as "special-purpose" (see special).
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

// The IPv6 forms that carry an IPv4 address in fixed bits.
var (
	nat64  = ssrf.IPv6NAT64Prefix               // 64:ff9b::/96, RFC 6052: the v4 in the last 32 bits
	compat = netip.MustParsePrefix("::/96")     // IPv4-compatible, RFC 4291 §2.5.5.1 (deprecated)
	sixTo4 = netip.MustParsePrefix("2002::/16") // 6to4, RFC 3056: the v4 in bits 16–47
)

func prefixes(list ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(list))
	for i, s := range list {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Classify names the refused class ip belongs to ("loopback", "private",
// "link-local", "metadata", "unspecified", "CGNAT (100.64.0.0/10)",
// "multicast", "reserved", or "special-purpose (<prefix>)" for the rest of
// the IANA special-purpose registries), or returns "" for an address the
// default policy allows.
//
// IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are
// the ways an IPv4 address is reached over IPv6, so they are judged by their
// IPv4 part alone. IPv4-compatible (::a.b.c.d) and 6to4 (2002:aabb:ccdd::)
// addresses are refused whatever they carry, under the class of the IPv4
// address they carry when it has one (::127.0.0.1 is "loopback").
func Classify(ip netip.Addr) string {
	ip = judged(ip)
	if !ip.IsValid() {
		return "invalid"
	}
	if c := named(ip); c != "" {
		return c
	}
	if v4, ok := embedded(ip); ok {
		if c := named(v4); c != "" {
			return c
		}
	}
	return special(ip)
}

// judged is the address the policy judges for ip: without its zone, and the
// IPv4 address itself for an IPv4-mapped or NAT64 one.
func judged(ip netip.Addr) netip.Addr {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:16]))
	}
	return ip
}

// embedded returns the IPv4 address an IPv4-compatible or 6to4 address carries.
func embedded(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case ip.Is4():
		return netip.Addr{}, false
	case compat.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixTo4.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

func named(ip netip.Addr) string {
	for _, r := range ranges {
		for _, p := range r.prefixes {
			if p.Contains(ip) {
				return r.class
			}
		}
	}
	return ""
}

// special judges ip by the IANA IPv4 and IPv6 special-purpose address
// registries as code.dny.dev/ssrf keeps them (generated from
// https://www.iana.org/assignments/iana-ipv4-special-registry/ and
// https://www.iana.org/assignments/iana-ipv6-special-registry/): an IPv4
// address in one of the registry's blocks, an IPv6 address outside global
// unicast (2000::/3) or in one of the registry's blocks inside it.
func special(ip netip.Addr) string {
	if ip.Is4() {
		for _, p := range ssrf.IPv4DeniedPrefixes {
			if p.Contains(ip) {
				return "special-purpose (" + p.String() + ")"
			}
		}
		return ""
	}
	if !ssrf.IPv6GlobalUnicast.Contains(ip) {
		return "special-purpose (outside 2000::/3)"
	}
	for _, p := range ssrf.IPv6DeniedPrefixes {
		if p.Contains(ip) {
			return "special-purpose (" + p.String() + ")"
		}
	}
	return ""
}
