package destinations

import (
	"slices"
	"time"
)

// A platform's breaker opens at platformFailures failures in one streak,
// of at least platformAccounts of its accounts, with no answer from any
// of its accounts between: one broken shop opens its own breaker, not its
// platform's, while two shops failing one after the other, with nothing
// answered between, is the platform down. Opening early costs little: an
// open breaker spends no attempt, it only delays (one cooldown, then a
// probe); a platform left closed through an outage sends the fleet's
// calls into it until the streak is long enough.
const (
	platformFailures = 2
	platformAccounts = 2
)

// A platform is a system that fails as a whole (Config.Platforms):
// Shopify down is every Shopify shop down, and waiting for each shop's
// breaker to learn it one by one would send, and fail, a call per shop per
// cooldown. So besides each account's record the platform has one of its
// own (its key is the system's name), whose breaker's probe is the first
// call to any of its accounts after the cooldown, and whose accounts are
// the streak of failing accounts.
//
// While a streak runs (a failure, no answer since) the platform is in
// doubt: one call at a time goes to it, fleet-wide, as a probe does, so
// the call that confirms the outage is one call, not every call the
// fleet starts before the failure that opens the breaker is written.
// Calls in flight when the streak began still end as they do: any answer
// ends the doubt.

// platformAdmits is breaker.admits for a platform's record: while it is
// in doubt, the one call allowed is the doubt's probe.
func (s *shared) platformAdmits(now time.Time) (probe bool, wait Wait) {
	b := &s.breaker
	if b.open || b.failures == 0 {
		return b.admits(now)
	}
	if wait, out := b.probing(now); out {
		return false, wait
	}
	return true, Wait{}
}

// platformFailed: a call to account failed upstream (probe: the
// platform's probe's name, or "").
func (s *shared) platformFailed(now time.Time, account, probe string, cfg BreakerConfig) {
	b := &s.breaker
	if b.open {
		b.failed(now, probe, cfg)
		return
	}
	if b.isProbe(probe) {
		// The doubt's probe failed: the next call may probe.
		b.probeBy, b.probeUntil = "", time.Time{}
	}
	if len(s.accounts) < platformAccounts && !slices.Contains(s.accounts, account) {
		s.accounts = append(s.accounts, account)
	}
	b.failures++
	if b.failures >= platformFailures && len(s.accounts) >= platformAccounts {
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
