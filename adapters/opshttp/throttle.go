package opshttp

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The bounds of failed authentications (a wrong bearer token on an
// operator route, a wrong token in the console's login form). Each address
// may fail FailuresPerAddress times, then once per AddressRefill; all
// addresses together FailuresInAll times, then GlobalRefillPerSecond a
// second. Past either bound an attempt is answered 429 with Retry-After
// before its token is looked at, the right one too: a throttle that still
// said which guess hit would slow no one.
const (
	FailuresPerAddress    = 10
	AddressRefill         = 30 * time.Second
	FailuresInAll         = 100
	GlobalRefillPerSecond = 5
	// maxAddresses bounds the addresses remembered; past it those whose
	// budget is whole again are forgotten, and if that is not enough, all
	// (the global bound still holds).
	maxAddresses = 10_000
)

// Throttle counts failed authentications per client address and in all.
// A success costs nothing: an operator's own logins are held back only by
// their address's failures and by the global bound.
//
// Check and Failed are two steps: attempts that are already past Check
// when the budget runs out still count, so a burst of concurrent guesses
// may pass the bound by as many as were in flight.
type Throttle struct {
	mu     sync.Mutex
	byAddr map[string]*rate.Limiter
	global *rate.Limiter
}

// NewThrottle is a throttle with every budget whole.
func NewThrottle() *Throttle {
	return &Throttle{
		byAddr: map[string]*rate.Limiter{},
		global: rate.NewLimiter(GlobalRefillPerSecond, FailuresInAll),
	}
}

// Check is how long the request's address must wait before it may try
// again, zero when it may now.
func (t *Throttle) Check(r *http.Request, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	wait := waitOf(t.global, now)
	if lim, ok := t.byAddr[clientAddress(r)]; ok {
		wait = max(wait, waitOf(lim, now))
	}
	return wait
}

// Failed counts one failed authentication of the request's address.
func (t *Throttle) Failed(r *http.Request, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	addr := clientAddress(r)
	lim, ok := t.byAddr[addr]
	if !ok {
		t.forgetIdle(now)
		lim = rate.NewLimiter(rate.Every(AddressRefill), FailuresPerAddress)
		t.byAddr[addr] = lim
	}
	lim.AllowN(now, 1)
	t.global.AllowN(now, 1)
}

// forgetIdle keeps the map bounded (under mu).
func (t *Throttle) forgetIdle(now time.Time) {
	if len(t.byAddr) < maxAddresses {
		return
	}
	for addr, lim := range t.byAddr {
		if lim.TokensAt(now) >= float64(lim.Burst()) {
			delete(t.byAddr, addr)
		}
	}
	if len(t.byAddr) >= maxAddresses {
		clear(t.byAddr)
	}
}

// waitOf is how long until lim holds one whole token at now.
func waitOf(lim *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - lim.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / float64(lim.Limit()) * float64(time.Second))
}

// clientAddress is who a request comes from, for the throttle: the
// connection's IP (the ops listener is reached directly, not through a
// proxy whose headers could be forged), an IPv6 address's /64 (what one
// host is usually given).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String()
	}
	return ip.String()
}
