package fetchpolicy_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/fetchpolicy"
)

func TestCheckAddrRefusesEveryNonPublicRange(t *testing.T) {
	var p fetchpolicy.Policy
	refused := map[string]string{
		"127.0.0.1":              "loopback",
		"127.255.255.254":        "loopback",
		"::1":                    "loopback",
		"::ffff:127.0.0.1":       "loopback", // IPv4-mapped
		"10.1.2.3":               "private",
		"172.16.0.1":             "private",
		"172.31.255.255":         "private",
		"192.168.1.1":            "private",
		"::ffff:192.168.1.1":     "private",
		"fc00::1":                "private",
		"fd12:3456::1":           "private",
		"169.254.169.254":        "link-local", // cloud metadata
		"::ffff:169.254.169.254": "link-local",
		"169.254.0.1":            "link-local",
		"fe80::1":                "link-local",
		"fe80::1%eth0":           "link-local",
		"0.0.0.0":                "unspecified",
		"0.1.2.3":                "unspecified",
		"::":                     "unspecified",
		"100.64.0.1":             "carrier-grade NAT",
		"100.127.255.255":        "carrier-grade NAT",
		"224.0.0.1":              "multicast",
		"239.255.255.250":        "multicast",
		"ff02::1":                "multicast",
		"255.255.255.255":        "reserved",
		"240.0.0.1":              "reserved",
		"192.0.0.8":              "reserved",
		"198.18.0.1":             "reserved",
		"192.0.2.1":              "documentation",
		"198.51.100.7":           "documentation",
		"203.0.113.9":            "documentation",
		"2001:db8::1":            "documentation",
		"::127.0.0.1":            "IPv4-compatible",
		"64:ff9b::a9fe:a9fe":     "NAT64", // 169.254.169.254 through NAT64
		"2002:a9fe:a9fe::1":      "6to4",
		"2001::1":                "Teredo",
		"fec0::1":                "site-local",
		"100::1":                 "reserved",
		"4000::1":                "unallocated",
	}
	for s, want := range refused {
		t.Run(s, func(t *testing.T) {
			err := p.CheckAddr(netip.MustParseAddr(s))
			var refusal *fetchpolicy.AddrRefusal
			require.True(t, errors.As(err, &refusal), "%s must be refused, got %v", s, err)
			assert.Contains(t, refusal.Range, want)
			assert.NotContains(t, err.Error(), s, "the message does not repeat the address")
		})
	}
	for _, s := range []string{"93.184.215.14", "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.32.0.1",
		"169.253.255.255", "2606:4700:4700::1111", "2a00:1450:4001:81d::200e", "::ffff:8.8.8.8"} {
		assert.NoError(t, p.CheckAddr(netip.MustParseAddr(s)), s)
	}
}

func TestCheckURL(t *testing.T) {
	var p fetchpolicy.Policy
	refused := map[string]string{
		"ftp://cdn.example.com/a.jpg":              "http or https",
		"file:///etc/passwd":                       "http or https",
		"gopher://cdn.example.com/":                "http or https",
		"javascript:alert(1)":                      "http or https",
		"/relative.jpg":                            "http or https",
		"https:cdn.example.com":                    "http or https",
		"https:///a.jpg":                           "http or https",
		"https://user:pass@cdn.example.com/a":      "user name or password",
		"https://user@cdn.example.com/a":           "user name or password",
		"http://127.0.0.1/":                        "loopback",
		"http://127.0.0.1:8080/x":                  "loopback",
		"http://[::1]/":                            "loopback",
		"http://[::ffff:127.0.0.1]/":               "loopback",
		"http://[::ffff:7f00:1]/":                  "loopback",
		"http://169.254.169.254/latest/meta-data/": "link-local",
		"http://[fe80::1%25eth0]/":                 "zone",
		"http://10.0.0.1/":                         "private",
		"http://0.0.0.0/":                          "unspecified",
		"http://localhost/":                        "loopback",
		"http://LOCALHOST./":                       "loopback",
		"http://api.localhost/":                    "loopback",
		"http://127.1/":                            "dotted-decimal",
		"http://2130706433/":                       "dotted-decimal",
		"http://0x7f000001/":                       "dotted-decimal",
		"http://0x7f.0.0.1/":                       "dotted-decimal",
		"http://017700000001/":                     "dotted-decimal",
		"http://%31%32%37.0.0.1/":                  "http or https", // Go refuses escapes in a host
		"http://exa mple.com/":                     "http or https",
		"http://bücher.example/":                   "DNS name",
	}
	for raw, want := range refused {
		t.Run(raw, func(t *testing.T) {
			_, err := p.CheckURL(raw)
			var refusal *fetchpolicy.URLRefusal
			require.True(t, errors.As(err, &refusal), "%s must be refused, got %v", raw, err)
			assert.Contains(t, refusal.Reason, want)
		})
	}

	target, err := p.CheckURL("https://CDN.Example.com./p/1.jpg?X-Amz-Signature=abc")
	require.NoError(t, err)
	assert.Equal(t, "cdn.example.com", target.Host)
	assert.True(t, target.NeedsLookup(), "a host name is resolved and checked")

	target, err = p.CheckURL("http://93.184.215.14:8080/a.png")
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("93.184.215.14"), target.Addr)
	assert.False(t, target.NeedsLookup(), "a public literal address needs no lookup")

	_, err = p.CheckURL("http://[2606:4700:4700::1111]/a.png")
	assert.NoError(t, err)
}

func TestAllowListsOpenRangesAndHosts(t *testing.T) {
	p, err := fetchpolicy.Parse(" 10.0.0.0/8, 127.0.0.1 ,fd00::/8", "minio.internal, *.corp.example,LocalHost")
	require.NoError(t, err)

	for _, s := range []string{"10.9.8.7", "::ffff:10.9.8.7", "127.0.0.1", "fd00::5"} {
		assert.NoError(t, p.CheckAddr(netip.MustParseAddr(s)), s)
	}
	for _, s := range []string{"127.0.0.2", "192.168.0.1", "169.254.169.254", "fc00::1"} {
		assert.Error(t, p.CheckAddr(netip.MustParseAddr(s)), s)
	}
	_, err = p.CheckURL("http://10.1.1.1/a")
	assert.NoError(t, err)
	_, err = p.CheckURL("http://169.254.169.254/a")
	assert.Error(t, err, "only the allowed ranges open")

	for _, raw := range []string{"http://minio.internal:9000/b/k", "http://MINIO.internal./b", "http://a.b.corp.example/x", "http://localhost:9000/"} {
		target, err := p.CheckURL(raw)
		require.NoError(t, err, raw)
		assert.True(t, target.HostAllowed, raw)
		assert.False(t, target.NeedsLookup(), "an allowed host is not resolved: %s", raw)
	}
	assert.False(t, p.HostAllowed("corp.example"), "*.corp.example covers names under it only")
	assert.False(t, p.HostAllowed("evilcorp.example"))
	_, err = p.CheckURL("https://user:pw@minio.internal/")
	assert.Error(t, err, "allowed hosts still carry no credentials")
}

func TestParseRefusesMalformedLists(t *testing.T) {
	_, err := fetchpolicy.Parse("10.0.0.0/33,nope,::ffff:10.0.0.0/104", "http://x.example,a b,")
	require.Error(t, err)
	for _, want := range []string{"10.0.0.0/33", "nope", "IPv4 form", "http://x.example", "a b"} {
		assert.Contains(t, err.Error(), want)
	}
	p, err := fetchpolicy.Parse("", " , ")
	require.NoError(t, err)
	assert.Error(t, p.CheckAddr(netip.MustParseAddr("127.0.0.1")), "empty lists allow public addresses only")
	assert.NoError(t, p.CheckAddr(netip.MustParseAddr("8.8.8.8")))
}

func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{"https://cdn.example.com/a.jpg", "http://127.0.0.1/", "http://[::ffff:a9fe:a9fe]/",
		"http://0x7f.1/", "http://user@host/", "http://localhost./", "https://93.184.215.14/"} {
		f.Add(seed)
	}
	var p fetchpolicy.Policy
	f.Fuzz(func(t *testing.T, raw string) {
		target, err := p.CheckURL(raw)
		if err != nil {
			return
		}
		// Whatever was accepted is http(s), has no credentials, and a literal
		// address in it is public.
		if target.URL.Scheme != "http" && target.URL.Scheme != "https" {
			t.Fatalf("%q accepted with scheme %q", raw, target.URL.Scheme)
		}
		if target.URL.User != nil {
			t.Fatalf("%q accepted with user information", raw)
		}
		if addr, err := netip.ParseAddr(target.URL.Hostname()); err == nil && p.CheckAddr(addr) != nil {
			t.Fatalf("%q accepted with a non-public address", raw)
		}
	})
}
