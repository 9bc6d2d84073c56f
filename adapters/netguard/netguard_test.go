package netguard_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/netguard"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/fetchpolicy"
)

func policy(t *testing.T, cidrs, hosts string) fetchpolicy.Policy {
	t.Helper()
	p, err := fetchpolicy.Parse(cidrs, hosts)
	require.NoError(t, err)
	return p
}

// listen accepts and closes connections on a loopback port until the test
// ends; it returns the port.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func TestDialerRefusesTheAddressActuallyDialled(t *testing.T) {
	port := listen(t)
	d := netguard.NewDialer(fetchpolicy.Policy{}, 5*time.Second)
	for _, address := range []string{
		"127.0.0.1:" + port,
		"[::ffff:127.0.0.1]:" + port,
		// A name passes no check of its own here: it is refused for the
		// address the dialler resolved it to, just before connecting. A
		// name that answered a public address when the request was checked
		// and a loopback one now (DNS rebinding) ends the same way.
		"localhost:" + port,
	} {
		t.Run(address, func(t *testing.T) {
			conn, err := d.DialContext(context.Background(), "tcp", address)
			if conn != nil {
				_ = conn.Close()
			}
			require.ErrorIs(t, err, netguard.ErrForbidden)
			assert.Contains(t, err.Error(), "loopback")
		})
	}
	_, err := d.DialContext(context.Background(), "udp", "127.0.0.1:"+port)
	assert.ErrorIs(t, err, netguard.ErrForbidden, "TCP only")
}

func TestDialerAllowListsOpenRangesAndHosts(t *testing.T) {
	port := listen(t)
	byRange := netguard.NewDialer(policy(t, "127.0.0.0/8", ""), 5*time.Second)
	conn, err := byRange.DialContext(context.Background(), "tcp", "127.0.0.1:"+port)
	require.NoError(t, err)
	_ = conn.Close()

	byHost := netguard.NewDialer(policy(t, "", "localhost"), 5*time.Second)
	conn, err = byHost.DialContext(context.Background(), "tcp4", "localhost:"+port)
	require.NoError(t, err, "an allowed host is dialled whatever it resolves to")
	_ = conn.Close()
	_, err = byHost.DialContext(context.Background(), "tcp", "127.0.0.1:"+port)
	assert.ErrorIs(t, err, netguard.ErrForbidden, "the host allow-list opens names, not their addresses")
}

func TestHTTPClientRefusesInternalTargetsAndRedirects(t *testing.T) {
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(inside.Close)

	_, err := netguard.NewHTTPClient(fetchpolicy.Policy{}, 10*time.Second).Get(inside.URL + "/a.png")
	require.ErrorIs(t, err, netguard.ErrForbidden, "a loopback server is out of reach by default")

	// Opened for the test's loopback server, as a private deployment would
	// open its own range: the redirects out of it are still checked.
	client := netguard.NewHTTPClient(policy(t, "127.0.0.0/8", ""), 10*time.Second)
	res, err := client.Get(inside.URL + "/a.png")
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	for _, path := range []string{"/to-metadata", "/to-file", "/loop"} {
		_, err := client.Get(inside.URL + path)
		assert.ErrorIs(t, err, netguard.ErrForbidden, path)
	}
}

func TestResolverAnswersFromTheSystem(t *testing.T) {
	addrs, err := netguard.NewResolver().LookupHost(context.Background(), "localhost") // /etc/hosts, no DNS
	require.NoError(t, err)
	require.NotEmpty(t, addrs)
	for _, a := range addrs {
		assert.True(t, a.Unmap().IsLoopback(), "%s", a)
	}
	_, err = netguard.NewResolver().LookupHost(canceled(), "cdn.example.com")
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "no answer now is unavailable: %v", err)
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
