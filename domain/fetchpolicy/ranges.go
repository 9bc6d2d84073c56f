package fetchpolicy

import "net/netip"

// nonPublic lists the special-purpose ranges (IANA's IPv4 and IPv6
// Special-Purpose Address Registries, plus multicast and the unallocated
// IPv4 space) that a fetch on a user's behalf must never reach. The first
// match names the range in the refusal, so narrower entries come first.
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are unmapped before the
// lookup and so meet the IPv4 entries; IPv6 outside 2000::/3 (the only
// global unicast allocation) is refused after this table.
var nonPublic = []struct {
	prefix netip.Prefix
	what   string
}{
	// IPv4.
	{netip.MustParsePrefix("0.0.0.0/8"), "the unspecified (this-network) range"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (where cloud metadata services live)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a reserved address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a reserved address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"}, // and 255.255.255.255

	// IPv6.
	{netip.MustParsePrefix("::/128"), "the unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address"},
	{netip.MustParsePrefix("64:ff9b::/96"), "an IPv4-translating address (NAT64)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "an IPv4-translating address (NAT64)"},
	{netip.MustParsePrefix("100::/64"), "a reserved address"},
	{netip.MustParsePrefix("2001::/32"), "an IPv4-tunnelling address (Teredo)"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("2001::/23"), "a reserved address"},
	{netip.MustParsePrefix("2002::/16"), "an IPv4-tunnelling address (6to4)"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address"},
	{netip.MustParsePrefix("5f00::/16"), "a reserved address"},
	{netip.MustParsePrefix("fc00::/7"), "a private (unique local) address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// globalUnicast6 is the only IPv6 space allocated for global unicast.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// rangeOf names the non-public range addr falls in, or "" when it is a
// public address.
func rangeOf(addr netip.Addr) string {
	for _, r := range nonPublic {
		if r.prefix.Contains(addr) {
			return r.what
		}
	}
	if addr.Is6() && !globalUnicast6.Contains(addr) {
		return "an unallocated IPv6 address"
	}
	return ""
}
