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
// doubt. For doubtHold after each failure no call starts: the calls
// already in flight answer for the platform first (one that fails too
// opens the breaker, one that answers ends the doubt), instead of new
// calls sent into what may be an outage. After the hold, one call at a
// time goes to it, fleet-wide, as a probe does. The hold is the breaker's
// openUntil, which a closed breaker does not otherwise use.
const doubtHold = time.Second

// platformAdmits is breaker.admits for a platform's record: while it is
// in doubt, nothing during the hold, then the one call allowed is the
// doubt's probe.
func (s *shared) platformAdmits(now time.Time) (probe bool, wait Wait) {
	b := &s.breaker
	if b.open || b.failures == 0 {
		return b.admits(now)
	}
	if now.Before(b.openUntil) {
		return false, Wait{Until: b.openUntil, Why: WhyProbing}
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
		return
	}
	b.openUntil = now.Add(doubtHold)
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
