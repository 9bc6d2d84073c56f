package fetchpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// Policy says which URLs and addresses may be fetched. The zero value allows
// public addresses only.
type Policy struct {
	allowPrefixes []netip.Prefix
	// allowHosts holds exact host names; allowSuffixes ".example.internal"
	// for an entry "*.example.internal".
	allowHosts    map[string]bool
	allowSuffixes []string
}

// Parse builds a policy from the operator's comma-separated allow-lists:
// cidrs of address ranges (10.0.0.0/8, fd00::/8, or single addresses) that
// may be fetched although they are not public, and hosts whose names may be
// fetched whatever they resolve to (minio.internal, or *.corp.example for
// every name under corp.example). Empty lists allow public addresses only.
func Parse(cidrs, hosts string) (Policy, error) {
	var p Policy
	var errs []error
	for _, s := range splitList(cidrs) {
		prefix, err := parsePrefix(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.allowPrefixes = append(p.allowPrefixes, prefix)
	}
	for _, s := range splitList(hosts) {
		name := normalizeHost(s)
		if suffix, ok := strings.CutPrefix(name, "*."); ok && validHostName(suffix) {
			p.allowSuffixes = append(p.allowSuffixes, "."+suffix)
			continue
		}
		if !validHostName(name) {
			errs = append(errs, fmt.Errorf("%q is not a host name (write the name only, or *.domain)", s))
			continue
		}
		if p.allowHosts == nil {
			p.allowHosts = map[string]bool{}
		}
		p.allowHosts[name] = true
	}
	return p, errors.Join(errs...)
}

func parsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		addr, err := netip.ParseAddr(s)
		if err != nil || addr.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is neither an address range (CIDR) nor an address", s)
		}
		return netip.PrefixFrom(addr, addr.BitLen()), nil
	}
	prefix, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an address range (CIDR)", s)
	}
	if prefix.Addr().Is4In6() {
		// Addresses are unmapped before they are checked, so such a range
		// would never match.
		return netip.Prefix{}, fmt.Errorf("%q: write IPv4 ranges in IPv4 form", s)
	}
	return prefix.Masked(), nil
}

func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// normalizeHost is the form host names are compared in: lower case, no
// trailing dot (the root), no IPv6 brackets.
func normalizeHost(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// validHostName accepts letters, digits, hyphens, underscores and dots: what
// a DNS name or an allow-list entry is made of.
func validHostName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.', c == '_':
		default:
			return false
		}
	}
	return true
}

// HostAllowed reports whether host is on the operator's host allow-list, so
// that what it resolves to is not checked.
func (p Policy) HostAllowed(host string) bool {
	name := normalizeHost(host)
	if p.allowHosts[name] {
		return true
	}
	for _, suffix := range p.allowSuffixes {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// AddrRefusal is the error of CheckAddr: the address lies in a range that
// may not be fetched. Range is a noun phrase ("a loopback address") that
// reads well in a message; neither it nor Error repeats the address.
type AddrRefusal struct {
	Range string
}

func (r *AddrRefusal) Error() string {
	return r.Range + " may not be fetched; only public addresses may"
}

// CheckAddr says whether addr may be connected to: a public address, or
// one in an allowed range. IPv4-mapped IPv6 addresses are judged as the IPv4
// address they carry; a zone is ignored.
//
// Errors: *AddrRefusal.
func (p Policy) CheckAddr(addr netip.Addr) error {
	addr = addr.Unmap().WithZone("")
	if !addr.IsValid() {
		return &AddrRefusal{Range: "an invalid address"}
	}
	for _, allowed := range p.allowPrefixes {
		if allowed.Contains(addr) {
			return nil
		}
	}
	if what := rangeOf(addr); what != "" {
		return &AddrRefusal{Range: what}
	}
	return nil
}

// Target is a URL that CheckURL accepted.
type Target struct {
	URL *url.URL
	// Host is the host name in compared form, or the literal address.
	Host string
	// Addr is the literal address when the URL names one; then it was
	// checked already.
	Addr netip.Addr
	// HostAllowed is set when the host is on the allow-list: what it
	// resolves to is not checked.
	HostAllowed bool
}

// NeedsLookup reports whether the host's addresses must still be resolved
// and checked with CheckAddr.
func (t Target) NeedsLookup() bool { return !t.Addr.IsValid() && !t.HostAllowed }

// URLRefusal is the error of CheckURL. Reason completes a sentence whose
// subject is the URL ("must be an absolute http or https URL"); it never
// repeats the URL, which may be signed.
type URLRefusal struct {
	Reason string
}

func (r *URLRefusal) Error() string { return r.Reason }

// CheckURL parses raw and checks what can be checked without a network: an
// absolute http or https URL with a host and no user information; a literal
// address that may be fetched; no host name that some resolvers read as an
// address or that always means this machine (127.1, 0x7f000001, localhost).
// A host name that passes must still be resolved and its addresses checked
// (Target.NeedsLookup).
//
// Errors: *URLRefusal.
func (p Policy) CheckURL(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.Host == "" {
		return Target{}, &URLRefusal{Reason: "must be an absolute http or https URL"}
	}
	if u.User != nil {
		return Target{}, &URLRefusal{Reason: "must not carry a user name or password"}
	}
	host := normalizeHost(u.Hostname())
	if host == "" {
		return Target{}, &URLRefusal{Reason: "must name a host"}
	}
	t := Target{URL: u, Host: host}
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Zone() != "" {
			return Target{}, &URLRefusal{Reason: "must not name an IPv6 zone"}
		}
		var refusal *AddrRefusal
		if err := p.CheckAddr(addr); errors.As(err, &refusal) {
			return Target{}, &URLRefusal{Reason: "points to " + refusal.Range + ", which may not be fetched; only public addresses may"}
		}
		t.Addr = addr
		return t, nil
	}
	if p.HostAllowed(host) {
		t.HostAllowed = true
		return t, nil
	}
	if !validHostName(host) {
		return Target{}, &URLRefusal{Reason: "must name a host by its DNS name or address"}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return Target{}, &URLRefusal{Reason: "points to a loopback address, which may not be fetched; only public addresses may"}
	}
	if endsInNumber(host) {
		return Target{}, &URLRefusal{Reason: "must write an IPv4 address in dotted-decimal form (a.b.c.d)"}
	}
	return t, nil
}

// endsInNumber reports whether the last label of host is a number (decimal,
// or 0x-prefixed hexadecimal). WHATWG URL parsers, browsers and C resolvers
// read such hosts as IPv4 addresses in shorthand (127.1, 2130706433,
// 0x7f.0.0.1), which a check of the dotted form alone would miss; no
// public DNS name ends that way.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		last = hex
		for _, c := range last {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
		return true
	}
	if last == "" {
		return false
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
