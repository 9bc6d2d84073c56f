package destinations

import (
	"sync"
	"time"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// busyHint is how soon a call turned away by the concurrency cap should
// ask again; the caller also asks again when one of the destination's
// permits is done, which is what frees a slot.
const busyHint = 50 * time.Millisecond

// Why says why Try gave no permit.
type Why string

const (
	// WhyPaced: the destination's rate is spent, or it asked to wait
	// (Retry-After).
	WhyPaced Why = "paced"
	// WhyBusy: the destination has its cap of calls in flight.
	WhyBusy Why = "busy"
	// WhyBreakerOpen: the destination's breaker is open.
	WhyBreakerOpen Why = "breaker_open"
	// WhyProbing: the breaker is half-open and its probe is out.
	WhyProbing Why = "probing"
	// WhyPaused: an operator paused the destination.
	WhyPaused Why = "paused"
)

// Wait is Try's answer when it gives no permit: the earliest time worth
// asking again, and why not now. It is zero when Try grants a permit.
type Wait struct {
	Until time.Time
	Why   Why
	// Of is the destination whose state refused: the one asked for, or
	// its platform (Config.Platforms) when the platform's breaker is open.
	Of model.Destination
	// Every is, for a paced wait, the time between two calls at the
	// fastest the destination's pace goes (its quota, or what it learnt
	// its ceiling to be); for a busy one, between two calls ending at its
	// cap of calls at once, at the calls' usual length (0 before one
	// ended). A caller holding many calls for it can so give each a turn
	// of its own, instead of asking again all at once.
	Every time.Duration
}

// Gate decides, per destination, whether a call may start now, and learns
// from how calls end. It is safe for concurrent use; each call takes one
// short lock.
type Gate struct {
	cfg   Config
	clock ports.Clock

	mu sync.Mutex
	// destinations holds those seen lately; sweep forgets the idle ones.
	destinations map[model.Destination]*destination
	platforms    map[string]*platform
	sweptAt      time.Time
}

// destination is what the gate keeps for one destination.
type destination struct {
	quota    Quota
	inFlight int
	pace     pace
	breaker  breaker
	// paused (until pausedUntil, or until resumed if that is zero).
	paused      bool
	pausedUntil time.Time
	usedAt      time.Time
	// callTime is how long its calls take (a moving average, from the
	// permit to its Done), 0 before one ended.
	callTime time.Duration

	pacedWaits, throttles, failures uint64
}

// NewGate returns the gate of cfg, telling time by clock.
func NewGate(cfg Config, clock ports.Clock) *Gate {
	return &Gate{cfg: cfg.withDefaults(), clock: clock, destinations: map[model.Destination]*destination{}, platforms: map[string]*platform{}}
}

// Permit is the right to make one call to a destination. End it with Done,
// exactly once.
type Permit struct {
	gate        *Gate
	destination model.Destination
	state       *destination
	grant       uint64
	probe       uint64
	// platform is the destination's platform breaker (nil: none), and
	// platformProbe the call's number if it is that breaker's probe.
	platform      *platform
	platformProbe uint64
	startedAt     time.Time
	done          bool
}

// Destination is where the permitted call goes.
func (p *Permit) Destination() model.Destination { return p.destination }

// Try asks to start one call to d now. Either a Permit (end it with Done,
// exactly once), or the earliest time worth asking again and why not now.
// A refusal costs nothing: no slot, no token, no probe is held for it.
func (g *Gate) Try(d model.Destination) (*Permit, Wait) {
	now := g.clock.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sweep(now)
	dest := g.destination(d, now)
	dest.usedAt = now
	if wait, paused := dest.pauseAt(now); paused {
		return nil, wait.of(d)
	}
	probe, wait := dest.breaker.admits(now)
	if wait.Why != "" {
		return nil, wait.of(d)
	}
	plat := g.platform(d, now)
	var platformProbe bool
	if plat != nil {
		if platformProbe, wait = plat.admits(now); wait.Why != "" {
			return nil, wait.of(model.Destination{System: d.System})
		}
	}
	if at := dest.pace.readyAt(now); at.After(now) {
		dest.pacedWaits++
		return nil, Wait{Until: at, Why: WhyPaced, Of: d, Every: dest.pace.interval()}
	}
	if dest.quota.Concurrency > 0 && dest.inFlight >= dest.quota.Concurrency {
		return nil, Wait{Until: now.Add(busyHint), Why: WhyBusy, Of: d, Every: dest.callTime / time.Duration(dest.quota.Concurrency)}
	}
	permit := &Permit{gate: g, destination: d, state: dest, grant: dest.pace.spend(now), platform: plat, startedAt: now}
	if probe {
		permit.probe = dest.breaker.startProbe()
	}
	if plat != nil {
		plat.inFlight++
		if platformProbe {
			permit.platformProbe = plat.startProbe()
		}
	}
	dest.inFlight++
	return permit, Wait{}
}

// of is w, refused by d's state.
func (w Wait) of(d model.Destination) Wait {
	w.Of = d
	return w
}

// Done reports the call's outcome: it frees the concurrency slot and
// teaches the gate. A second Done of the same permit does nothing.
func (p *Permit) Done(o Outcome) {
	g := p.gate
	now := g.clock.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	dest := p.state
	dest.inFlight--
	dest.usedAt = now
	if o.Kind == Succeeded || o.Kind == Throttled {
		dest.timed(now.Sub(p.startedAt))
	}
	switch o.Kind {
	case Succeeded:
		dest.breaker.answered(p.probe)
		dest.pace.succeeded(now, p.grant, o.QuotaUsed, o.QuotaLimit)
	case Throttled:
		// A 429 is an answer: the destination is up, only busy.
		dest.throttles++
		dest.breaker.answered(p.probe)
		dest.pace.throttled(now, p.grant, o.RetryAfter)
	case Failed:
		dest.failures++
		dest.breaker.failed(now, p.probe, g.cfg.Breaker)
	default:
		dest.breaker.abandoned(p.probe)
	}
	if plat := p.platform; plat != nil {
		plat.inFlight--
		plat.usedAt = now
		switch o.Kind {
		case Succeeded, Throttled:
			plat.answered(p.platformProbe)
		case Failed:
			plat.failed(now, p.destination.Account, p.platformProbe, g.cfg.Breaker)
		default:
			plat.abandoned(p.platformProbe)
		}
	}
}

// platform is d's platform breaker, made if new; nil if d's system is not
// a platform (Config.Platforms) or d names no account.
func (g *Gate) platform(d model.Destination, now time.Time) *platform {
	if d.Account == "" || !g.cfg.Platforms[d.System] {
		return nil
	}
	plat, ok := g.platforms[d.System]
	if !ok {
		plat = &platform{}
		g.platforms[d.System] = plat
	}
	plat.usedAt = now
	return plat
}

// destination is d's state, made at its system's quota if d is new.
func (g *Gate) destination(d model.Destination, now time.Time) *destination {
	dest, ok := g.destinations[d]
	if !ok {
		quota := g.cfg.quota(d.System)
		dest = &destination{quota: quota, pace: newPace(quota, now), usedAt: now}
		g.destinations[d] = dest
	}
	return dest
}

// pauseAt says whether dest is paused at now (ending a pause whose time is
// over), and until when to wait if so. A pause until resumed is asked
// about again after pauseRecheck.
func (dest *destination) pauseAt(now time.Time) (Wait, bool) {
	if !dest.paused {
		return Wait{}, false
	}
	if dest.pausedUntil.IsZero() {
		return Wait{Until: now.Add(pauseRecheck), Why: WhyPaused}, true
	}
	if !now.Before(dest.pausedUntil) {
		dest.paused, dest.pausedUntil = false, time.Time{}
		return Wait{}, false
	}
	return Wait{Until: dest.pausedUntil, Why: WhyPaused}, true
}

// sweep forgets the destinations idle for cfg.IdleAfter, at most a few
// times per IdleAfter, so a call pays for it rarely and the map holds only
// the destinations in use (or in trouble) lately.
func (g *Gate) sweep(now time.Time) {
	if now.Sub(g.sweptAt) < g.cfg.IdleAfter/4 {
		return
	}
	g.sweptAt = now
	for d, dest := range g.destinations {
		if dest.idle(now, g.cfg.IdleAfter) {
			delete(g.destinations, d)
		}
	}
	for system, plat := range g.platforms {
		if plat.idle(now, g.cfg.IdleAfter) {
			delete(g.platforms, system)
		}
	}
}

// idle: nothing in flight, nothing to remember (breaker closed, not
// paused, no Retry-After running), and unused for idleAfter.
func (dest *destination) idle(now time.Time, idleAfter time.Duration) bool {
	_, paused := dest.pauseAt(now)
	return dest.inFlight == 0 && !dest.breaker.open && !paused && !dest.pace.blocked(now) &&
		now.Sub(dest.usedAt) >= idleAfter
}

// timed adds an answered call's length to the destination's average: an
// exponentially weighted one, an eighth per call, so it follows a
// receiver that slows down within a few dozen calls. A failure (a
// timeout) is not a call's usual length and is left out. A sample is
// clamped to at most 4 times the average, so one straggler does not
// multiply the turns of a backlog parked meanwhile, and to at least 0: the
// clock is the wall's, which may step back.
func (d *destination) timed(took time.Duration) {
	took = max(took, 0)
	if d.callTime == 0 {
		d.callTime = took
		return
	}
	took = min(took, 4*d.callTime)
	d.callTime += (took - d.callTime) / 8
}
