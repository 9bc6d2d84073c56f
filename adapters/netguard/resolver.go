package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Resolver is the ports.HostResolver over the system's resolver (Go's,
// reading /etc/hosts and /etc/resolv.conf).
type Resolver struct {
	resolver *net.Resolver
}

var _ ports.HostResolver = (*Resolver)(nil)

// NewResolver returns the system resolver.
func NewResolver() *Resolver { return &Resolver{resolver: net.DefaultResolver} }

// LookupHost returns every address of host; see ports.HostResolver.
func (r *Resolver) LookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := r.resolver.LookupNetIP(ctx, "ip", host)
	return addrs, lookupError(err)
}

// lookupError keeps "no such name" apart from "no answer now": the first is
// an empty answer, the second CodeUnavailable.
func lookupError(err error) error {
	if err == nil {
		return nil
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return nil
	}
	return domain.Wrap(domain.CodeUnavailable, err, "host lookup failed")
}
