package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/oncehq/once/domain/fetchpolicy"
)

// ErrForbidden is wrapped by every refusal of this package: a connection or
// redirect to an address or URL the fetch policy does not allow. A fetcher
// treats it as a permanent failure of that URL.
var ErrForbidden = errors.New("netguard: destination may not be fetched")

// Dialer dials TCP connections to allowed addresses only.
type Dialer struct {
	policy fetchpolicy.Policy
	// guarded checks every address it connects to; open serves the hosts
	// on the operator's allow-list, whatever they resolve to.
	guarded net.Dialer
	open    net.Dialer
}

// NewDialer returns a dialer enforcing policy; timeout bounds each connect.
func NewDialer(policy fetchpolicy.Policy, timeout time.Duration) *Dialer {
	d := &Dialer{policy: policy}
	d.open = net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	d.guarded = d.open
	d.guarded.Control = d.control
	return d
}

// DialContext connects to address ("host:port") unless the policy forbids
// the address the host resolves to; it fits http.Transport.DialContext.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if !strings.HasPrefix(network, "tcp") {
		return nil, fmt.Errorf("%w: network %q", ErrForbidden, network)
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if d.policy.HostAllowed(host) {
		return d.open.DialContext(ctx, network, address)
	}
	return d.guarded.DialContext(ctx, network, address)
}

// control runs after resolution and before connect, with the very address
// the socket will connect to.
func (d *Dialer) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable address %q", ErrForbidden, address)
	}
	var refusal *fetchpolicy.AddrRefusal
	if errors.As(d.policy.CheckAddr(ap.Addr()), &refusal) {
		return fmt.Errorf("%w: %s is %s", ErrForbidden, ap.Addr(), refusal.Range)
	}
	return nil
}
