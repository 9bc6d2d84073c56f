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

// breaker is one destination's circuit breaker. Closed, it counts
// consecutive upstream failures; at cfg.Failures it opens for a cooldown,
// during which no call goes. After the cooldown it is half-open: one call,
// the probe, goes, and its answer decides: any answer closes it, another
// failure opens it for twice as long (up to cfg.MaxCooldown). While open,
// the outcomes of calls that started before it opened teach nothing: only
// the probe speaks for the destination now.
type breaker struct {
	failures  int
	open      bool
	openUntil time.Time
	cooldown  time.Duration
	// probing: the probe is out; probe numbers it, so the answer of a
	// probe from before the breaker was closed by hand is not taken for
	// the current one's.
	probing bool
	probe   uint64
	// readings moves openUntil back when the clock steps back (follow).
	readings readings
}

// follow takes a backward step of the clock out of openUntil (readings):
// the cooldown keeps what it had left.
func (b *breaker) follow(now time.Time) {
	if back := b.readings.stepBack(now); back > 0 {
		b.openUntil = earlier(b.openUntil, back)
	}
}

// admits says whether a call may start at now (a zero Wait) and whether it
// would be the probe.
func (b *breaker) admits(now time.Time) (probe bool, wait Wait) {
	b.follow(now)
	switch {
	case !b.open:
		return false, Wait{}
	case now.Before(b.openUntil):
		return false, Wait{Until: b.openUntil, Why: WhyBreakerOpen}
	case b.probing:
		return false, Wait{Until: now.Add(probeHint), Why: WhyProbing}
	}
	return true, Wait{}
}

// startProbe sends the probe; its number goes on the permit.
func (b *breaker) startProbe() uint64 {
	b.probing = true
	b.probe++
	return b.probe
}

func (b *breaker) isProbe(probe uint64) bool { return probe != 0 && b.probing && probe == b.probe }

// answered: the destination answered the call (probe: the probe's number,
// or 0), even with a refusal. It is up.
func (b *breaker) answered(probe uint64) {
	if b.isProbe(probe) || !b.open {
		b.close()
	}
}

// failed: the call failed upstream (a 5xx, a timeout, a refused connection).
func (b *breaker) failed(now time.Time, probe uint64, cfg BreakerConfig) {
	b.follow(now)
	switch {
	case b.isProbe(probe):
		b.probing = false
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

// trip opens the breaker for its first cooldown.
func (b *breaker) trip(now time.Time, cfg BreakerConfig) {
	b.open, b.cooldown = true, cfg.Cooldown
	b.openUntil = now.Add(b.cooldown)
}

// abandoned: the call ended on our side; a probe that did lets another go.
func (b *breaker) abandoned(probe uint64) {
	if b.isProbe(probe) {
		b.probing = false
	}
}

// close forgets the failures and the cooldown.
func (b *breaker) close() { *b = breaker{probe: b.probe} }

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
