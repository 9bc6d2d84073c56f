package destinations

import (
	"time"
)

// probeHint is how soon a call turned away while the probe is out should
// ask again: the probe's answer takes about one call.
const probeHint = time.Second

// Breaker states, as State.Breaker names them.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half_open"
)

// breaker is one destination's circuit breaker, shared by the fleet of
// workers. Closed, it counts consecutive upstream failures; at
// cfg.Failures it opens for a cooldown, during which no call goes. After
// the cooldown it is half-open: one call, the probe, goes, and its answer
// decides: any answer closes it, another failure opens it for twice as
// long (up to cfg.MaxCooldown). While open, the outcomes of calls that
// started before it opened teach nothing: only the probe speaks for the
// destination now.
//
// The probe is a lease: the worker that takes it writes its name and an
// end (probeUntil) with a compare-and-set, so of all the workers exactly
// one probes per cooldown; a worker killed during its probe never answers,
// and once its lease is over another worker probes.
type breaker struct {
	failures  int
	open      bool
	openUntil time.Time
	cooldown  time.Duration
	// probeBy names the probe out ("": none), until probeUntil. A name
	// is never used twice, so the answer of a probe from before the
	// breaker was closed by hand (or from a lease that ran out) is not
	// taken for the current one's.
	probeBy    string
	probeUntil time.Time
}

// admits says whether a call may start at now (a zero Wait) and whether it
// would be the probe.
func (b *breaker) admits(now time.Time) (probe bool, wait Wait) {
	switch {
	case !b.open:
		return false, Wait{}
	case now.Before(b.openUntil):
		return false, Wait{Until: b.openUntil, Why: WhyBreakerOpen}
	}
	if wait, out := b.probing(now); out {
		return false, wait
	}
	return true, Wait{}
}

// probing: a probe is out at now, and the wait of a call turned away
// meanwhile.
func (b *breaker) probing(now time.Time) (Wait, bool) {
	if b.probeBy == "" || !now.Before(b.probeUntil) {
		return Wait{}, false
	}
	until := now.Add(probeHint)
	if b.probeUntil.Before(until) {
		until = b.probeUntil
	}
	return Wait{Until: until, Why: WhyProbing}, true
}

// startProbe leases the probe to by until now+lease.
func (b *breaker) startProbe(by string, now time.Time, lease time.Duration) {
	b.probeBy, b.probeUntil = by, now.Add(lease)
}

func (b *breaker) isProbe(probe string) bool { return probe != "" && b.probeBy == probe }

// answered: the destination answered the call (probe: the probe's name,
// or ""), even with a refusal. It is up.
func (b *breaker) answered(probe string) {
	if b.isProbe(probe) || !b.open {
		b.close()
	}
}

// failed: the call failed upstream (a 5xx, a timeout, a refused connection).
func (b *breaker) failed(now time.Time, probe string, cfg BreakerConfig) {
	switch {
	case b.isProbe(probe):
		b.probeBy, b.probeUntil = "", time.Time{}
		b.cooldown = min(2*b.cooldown, cfg.MaxCooldown)
		b.openUntil = now.Add(b.cooldown)
	case b.open:
		return
	default:
		b.failures++
		if b.failures >= cfg.Failures {
			b.trip(now, cfg)
		}
	}
}

// trip opens the breaker for its first cooldown. A probe out (a
// platform's doubt) started before it opened: its answer teaches nothing.
func (b *breaker) trip(now time.Time, cfg BreakerConfig) {
	b.open, b.cooldown = true, cfg.Cooldown
	b.openUntil = now.Add(b.cooldown)
	b.probeBy, b.probeUntil = "", time.Time{}
}

// abandoned: the call ended on our side; a probe that did lets another go.
func (b *breaker) abandoned(probe string) {
	if b.isProbe(probe) {
		b.probeBy, b.probeUntil = "", time.Time{}
	}
}

// close forgets the failures, the cooldown and the probe.
func (b *breaker) close() { *b = breaker{} }

// state names the state at now.
func (b *breaker) state(now time.Time) string {
	switch {
	case !b.open:
		return BreakerClosed
	case now.Before(b.openUntil):
		return BreakerOpen
	}
	return BreakerHalfOpen
}
