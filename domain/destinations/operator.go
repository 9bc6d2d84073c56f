package destinations

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/oncehq/once/domain/model"
)

// pauseRecheck is how soon a call to a destination paused until resumed
// should ask again: the pause has no end to wait for.
const pauseRecheck = time.Minute

// Pause lets no call start to d until until (zero: until Resume), on
// every worker of the fleet: the pause is written to the store, which
// each of them reads within Config.StateTTL. Calls in flight go on. An
// error is the store's: nothing was paused.
func (g *Gate) Pause(ctx context.Context, d model.Destination, until time.Time) error {
	return g.operate(ctx, d, func(s *shared) { s.paused, s.pausedUntil = true, until })
}

// Resume ends d's pause, on every worker of the fleet.
func (g *Gate) Resume(ctx context.Context, d model.Destination) error {
	return g.operate(ctx, d, func(s *shared) { s.paused, s.pausedUntil = false, time.Time{} })
}

// CloseBreaker closes d's breaker by hand, its failures and cooldown
// forgotten, on every worker of the fleet: an operator who knows the
// destination is back need not wait for the probe. A platform's name
// alone (d without an account) closes the platform's breaker.
func (g *Gate) CloseBreaker(ctx context.Context, d model.Destination) error {
	return g.operate(ctx, d, func(s *shared) {
		s.breaker.close()
		if d.Account == "" {
			s.accounts = nil
		}
	})
}

// target is d's record: a platform's own when d names only a system.
func (g *Gate) target(d model.Destination) target {
	if d.Account == "" {
		return g.application(d.System)
	}
	return target{key: d.String(), quota: g.cfg.quota(d.System)}
}

// operate applies an operator's change to d's record as the store has it
// now (not as cached), and makes this gate's cache see it at once (and
// its Snapshot list d).
func (g *Gate) operate(ctx context.Context, d model.Destination, change func(s *shared)) error {
	t, now := g.target(d), g.clock.Now()
	g.forget(t.key)
	if d.Account != "" {
		g.mu.Lock()
		g.destination(d, now).usedAt = now
		g.mu.Unlock()
	}
	return g.update(ctx, t, now, change)
}

// State is one destination as the gate sees it, for metrics and operators.
type State struct {
	Destination string
	// InFlight counts this worker's calls to it in flight, FleetInFlight
	// every worker's as the record said when last read (0 for a
	// destination whose calls are not capped: nobody counts them).
	InFlight, FleetInFlight int
	// Rate is the current learned rate, calls a second (0: unlimited).
	Rate float64
	// Breaker is BreakerClosed, BreakerOpen or BreakerHalfOpen.
	Breaker string
	// OpenUntil is when an open breaker's cooldown ends (zero: closed).
	OpenUntil time.Time
	// ThrottledUntil is when the destination's last Retry-After ends
	// (zero, or past: none running).
	ThrottledUntil time.Time
	Paused         bool
	// PausedUntil is when a pause ends (zero: until resumed).
	PausedUntil time.Time
	// The counters run from when the gate first saw the destination (or
	// saw it again after forgetting it idle): calls turned away by the
	// pace, 429s, upstream failures, and calls the fleet's state could
	// not be read or written for.
	PacedWaits, Throttles, Failures, StateErrors uint64
}

// Snapshot is every destination the gate holds, sorted by destination:
// the shared state as this gate last read it (at most Config.StateTTL
// old while the destination is in use), its own calls in flight and
// counters. It asks the store nothing.
func (g *Gate) Snapshot() []State {
	now := g.clock.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	states := make([]State, 0, len(g.destinations)+len(g.platforms))
	for d, dest := range g.destinations {
		s := newShared(target{quota: dest.quota}, now)
		if rec, ok := g.records[d.String()]; ok {
			s = rec.state.clone()
		}
		_, paused := s.pauseAt(now)
		state := State{
			Destination: d.String(), InFlight: dest.inFlight, FleetInFlight: len(s.calls.live(now)), Rate: s.pace.rate,
			Breaker: s.breaker.state(now), ThrottledUntil: s.pace.blockedUntil,
			Paused: paused, PausedUntil: s.pausedUntil,
			PacedWaits: dest.pacedWaits, Throttles: dest.throttles, Failures: dest.failures, StateErrors: dest.stateErrors,
		}
		if s.breaker.open {
			state.OpenUntil = s.breaker.openUntil
		}
		states = append(states, state)
	}
	for system, plat := range g.platforms {
		var s shared
		if rec, ok := g.records[system]; ok {
			s = rec.state
		}
		state := State{Destination: system, InFlight: plat.inFlight, Rate: s.pace.rate, Breaker: s.breaker.state(now), ThrottledUntil: s.pace.blockedUntil}
		if s.breaker.open {
			state.OpenUntil = s.breaker.openUntil
		}
		states = append(states, state)
	}
	slices.SortFunc(states, func(a, b State) int { return strings.Compare(a.Destination, b.Destination) })
	return states
}
