package destinations

import (
	"slices"
	"time"
)

// platformAccounts is how many of a platform's accounts must fail in one
// streak, with no answer from any of its accounts between, for the
// platform's breaker to open: one broken shop opens its own breaker, not
// its platform's.
const platformAccounts = 3

// platform is the breaker of a system that fails as a whole
// (Config.Platforms): Shopify down is every Shopify shop down, and waiting
// for each shop's breaker to learn it one by one would send, and fail, a
// call per shop per cooldown. Its probe is the first call to any of its
// accounts after the cooldown.
type platform struct {
	breaker
	// accounts whose failures make the current streak, up to
	// platformAccounts.
	accounts []string
	inFlight int
	usedAt   time.Time
}

// failed: a call to account failed upstream.
func (p *platform) failed(now time.Time, account string, probe uint64, cfg BreakerConfig) {
	if p.isProbe(probe) || p.open {
		p.breaker.failed(now, probe, cfg)
		return
	}
	if len(p.accounts) < platformAccounts && !slices.Contains(p.accounts, account) {
		p.accounts = append(p.accounts, account)
	}
	p.failures++
	if p.failures >= cfg.Failures && len(p.accounts) >= platformAccounts {
		p.trip(now, cfg)
	}
}

// answered: one of its accounts answered a call. The streak is over.
func (p *platform) answered(probe uint64) {
	p.breaker.answered(probe)
	if !p.open {
		p.accounts = p.accounts[:0]
	}
}

// close closes it by hand.
func (p *platform) close() {
	p.breaker.close()
	p.accounts = p.accounts[:0]
}

// idle: closed, no streak running, unused for idleAfter.
func (p *platform) idle(now time.Time, idleAfter time.Duration) bool {
	return p.inFlight == 0 && !p.open && p.failures == 0 && now.Sub(p.usedAt) >= idleAfter
}
