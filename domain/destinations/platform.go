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

// A platform is a system that fails as a whole (Config.Platforms):
// Shopify down is every Shopify shop down, and waiting for each shop's
// breaker to learn it one by one would send, and fail, a call per shop per
// cooldown. So besides each account's record the platform has one of its
// own (its key is the system's name), whose breaker's probe is the first
// call to any of its accounts after the cooldown, and whose accounts are
// the streak of failing accounts.

// platformFailed: a call to account failed upstream (probe: the
// platform's probe's name, or "").
func (s *shared) platformFailed(now time.Time, account, probe string, cfg BreakerConfig) {
	b := &s.breaker
	if b.isProbe(probe) || b.open {
		b.failed(now, probe, cfg)
		return
	}
	if len(s.accounts) < platformAccounts && !slices.Contains(s.accounts, account) {
		s.accounts = append(s.accounts, account)
	}
	b.failures++
	if b.failures >= cfg.Failures && len(s.accounts) >= platformAccounts {
		b.trip(now, cfg)
	}
}

// platformAnswered: one of its accounts answered a call. The streak is over.
func (s *shared) platformAnswered(probe string) {
	s.breaker.answered(probe)
	if !s.breaker.open {
		s.accounts = nil
	}
}

// platform is what this process keeps of a platform besides the shared
// record: its calls in flight.
type platform struct {
	inFlight int
	usedAt   time.Time
	// recent counts the grants of an unpaced application bucket, to
	// start its learning from at its first 429.
	recent recentGrants
}
