package destinations

import (
	"slices"
	"strings"
	"time"

	"github.com/oncehq/once/domain/model"
)

// pauseRecheck is how soon a call to a destination paused until resumed
// should ask again: the pause has no end to wait for.
const pauseRecheck = time.Minute

// Pause lets no call start to d until until (zero: until Resume). Calls in
// flight go on.
func (g *Gate) Pause(d model.Destination, until time.Time) {
	now := g.clock.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	dest := g.destination(d, now)
	dest.paused, dest.pausedUntil, dest.usedAt = true, until, now
}

// Resume ends d's pause.
func (g *Gate) Resume(d model.Destination) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if dest, ok := g.destinations[d]; ok {
		dest.paused, dest.pausedUntil = false, time.Time{}
	}
}

// CloseBreaker closes d's breaker by hand, its failures and cooldown
// forgotten: an operator who knows the destination is back need not wait
// for the probe. A platform's name alone (d without an account) closes
// the platform's breaker.
func (g *Gate) CloseBreaker(d model.Destination) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if dest, ok := g.destinations[d]; ok {
		dest.breaker.close()
	}
	if plat, ok := g.platforms[d.System]; ok && d.Account == "" {
		plat.close()
	}
}

// State is one destination as the gate sees it, for metrics and operators.
type State struct {
	Destination string
	InFlight    int
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
	// pace, 429s, upstream failures.
	PacedWaits, Throttles, Failures uint64
}

// Snapshot is every destination the gate holds, sorted by destination.
func (g *Gate) Snapshot() []State {
	now := g.clock.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	states := make([]State, 0, len(g.destinations))
	for d, dest := range g.destinations {
		_, paused := dest.pauseAt(now)
		state := State{
			Destination: d.String(), InFlight: dest.inFlight, Rate: dest.pace.rate,
			Breaker: dest.breaker.state(now), ThrottledUntil: dest.pace.blockedUntil,
			Paused: paused, PausedUntil: dest.pausedUntil,
			PacedWaits: dest.pacedWaits, Throttles: dest.throttles, Failures: dest.failures,
		}
		if dest.breaker.open {
			state.OpenUntil = dest.breaker.openUntil
		}
		states = append(states, state)
	}
	for system, plat := range g.platforms {
		state := State{Destination: system, InFlight: plat.inFlight, Breaker: plat.state(now)}
		if plat.open {
			state.OpenUntil = plat.openUntil
		}
		states = append(states, state)
	}
	slices.SortFunc(states, func(a, b State) int { return strings.Compare(a.Destination, b.Destination) })
	return states
}
