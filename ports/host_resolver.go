package ports

import (
	"context"
	"net/netip"
)

// HostResolver resolves a host name to its addresses, so that a URL the
// service will fetch later can be refused at once when its host points at a
// private or internal address (domain/fetchpolicy). It is the request-time
// half of the check; the fetcher checks again the address it connects to.
type HostResolver interface {
	// LookupHost returns every address host resolves to now. A name that
	// does not exist (NXDOMAIN) or has no addresses returns none and no
	// error. domain.CodeUnavailable when the resolver cannot answer (timeout,
	// server failure).
	LookupHost(ctx context.Context, host string) ([]netip.Addr, error)
}
