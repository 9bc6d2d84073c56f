package destinations

import (
	"encoding/json"
	"slices"
	"time"
)

// shared is what the fleet of workers keeps of one destination, or of a
// platform as a whole, in ports.DestinationStates: whatever a worker
// learns there, every other one obeys. What is only this process's
// (calls in flight, their usual length, the counters) stays in
// destination.
type shared struct {
	pace    pace
	breaker breaker
	// accounts is, for a platform, the accounts whose failures make the
	// current streak (platformAccounts at most).
	accounts []string
	// paused (until pausedUntil, or until resumed if that is zero).
	paused      bool
	pausedUntil time.Time
	// calls are the destination's calls in flight across the fleet (see
	// calls), kept when its quota caps them.
	calls calls
}

// newShared is the state of t before anything is learnt.
func newShared(t target, now time.Time) shared {
	if t.starting {
		return shared{pace: newStartingPace(t.quota, now)}
	}
	return shared{pace: newPace(t.quota, now)}
}

// recordKeep is how long the fleet's store keeps a destination's record
// nobody writes (ports.DestinationStates.Swap's keep): longer than any
// wait the record holds (a cooldown, a lease, a Retry-After of a day), so
// what is forgotten is a destination nobody called for a week, which
// starts again at its configured quota.
const recordKeep = 7 * 24 * time.Hour

// keep is how long the store keeps s written at now: for ever while
// paused until resumed, and past a pause's end otherwise.
func (s shared) keep(now time.Time) time.Duration {
	switch {
	case s.paused && s.pausedUntil.IsZero():
		return 0
	case s.paused && s.pausedUntil.After(now):
		return s.pausedUntil.Sub(now) + recordKeep
	}
	return recordKeep
}

// clone is a copy of s that shares nothing with it.
func (s shared) clone() shared {
	s.accounts = slices.Clone(s.accounts)
	s.calls = slices.Clone(s.calls)
	return s
}

// settle brings s to now as any reader would: the bucket refilled, a pause
// whose time is over ended, the calls whose leases are over forgotten.
// Two states equal once settled differ in nothing a write needs to keep.
func (s *shared) settle(now time.Time, cfg Config) {
	s.bound(now, cfg)
	if s.pace.rate > 0 {
		s.pace.refill(now)
	}
	s.pauseAt(now)
	s.calls = s.calls.live(now)
}

// bound brings every time s keeps to at most its own length ahead of now:
// a Retry-After's end to its length, an open breaker's to its cooldown, a
// probe's lease to the lease, a call's lease to its length, the bucket's last refill to the Retry-After
// running (or now). The record's times are the clocks of the workers that
// wrote them: one whose wall clock ran ahead, or this one's stepped back
// (NTP, a VM resumed), would otherwise make every worker wait out the
// difference too, and an hour's step would refuse every call to a paced
// destination for an hour. So a step costs a wait at most its whole
// length again, never the step. Within minStep a time is left alone: two
// calls that read the clock before they take the gate's lock may take it
// in the other order, and moving the last refill back by that would hand
// out tokens never earned.
func (s *shared) bound(now time.Time, cfg Config) (moved bool) {
	p, b := &s.pace, &s.breaker
	before := [4]time.Time{p.blockedUntil, p.filledAt, b.openUntil, b.probeUntil}
	p.blockedUntil = atMost(p.blockedUntil, now, p.blockedFor)
	p.filledAt = atMost(p.filledAt, now, max(p.blockedUntil.Sub(now), 0))
	if b.open {
		b.openUntil = atMost(b.openUntil, now, b.cooldown)
	} else {
		b.openUntil = atMost(b.openUntil, now, doubtHold) // a platform's doubt
	}
	b.probeUntil = atMost(b.probeUntil, now, cfg.Breaker.ProbeLease)
	callsMoved := s.calls.bound(now, cfg.CallLease)
	return callsMoved || before != [4]time.Time{p.blockedUntil, p.filledAt, b.openUntil, b.probeUntil}
}

// minStep is the least a time may stand past its bound before bound moves
// it (see bound).
const minStep = 100 * time.Millisecond

// atMost is t, or now+length if t is later than that by minStep or more;
// the zero time (unset) stays zero.
func atMost(t, now time.Time, length time.Duration) time.Time {
	if limit := now.Add(length); !t.IsZero() && t.Sub(limit) >= minStep {
		return limit
	}
	return t
}

// pauseAt says whether s is paused at now (ending a pause whose time is
// over), and until when to wait if so. A pause until resumed is asked
// about again after pauseRecheck.
func (s *shared) pauseAt(now time.Time) (Wait, bool) {
	if !s.paused {
		return Wait{}, false
	}
	if s.pausedUntil.IsZero() {
		return Wait{Until: now.Add(pauseRecheck), Why: WhyPaused}, true
	}
	if !now.Before(s.pausedUntil) {
		s.paused, s.pausedUntil = false, time.Time{}
		return Wait{}, false
	}
	return Wait{Until: s.pausedUntil, Why: WhyPaused}, true
}

// troubled: something to remember (a breaker not closed or a streak of
// failures running, a pause, a Retry-After running).
func (s *shared) troubled(now time.Time) bool {
	_, paused := s.pauseAt(now)
	return s.breaker.open || s.breaker.failures > 0 || paused || s.pace.blocked(now)
}

// sharedWire is shared as the store keeps it (JSON): the names are the
// record's format, read by every worker of every version deployed at
// once, so a field is only ever added.
type sharedWire struct {
	Unpaced      bool          `json:"unpaced,omitempty"`
	Ceiling      float64       `json:"ceiling,omitempty"`
	Met          float64       `json:"met,omitempty"`
	Starting     bool          `json:"starting,omitempty"`
	Rate         float64       `json:"rate,omitempty"`
	Burst        float64       `json:"burst,omitempty"`
	Tokens       float64       `json:"tokens,omitempty"`
	FilledAt     time.Time     `json:"filled_at"`
	BlockedUntil time.Time     `json:"blocked_until,omitzero"`
	BlockedFor   time.Duration `json:"blocked_for,omitempty"`
	Grants       uint64        `json:"grants,omitempty"`
	SlowedAt     uint64        `json:"slowed_at,omitempty"`
	SlowedTime   time.Time     `json:"slowed_time,omitzero"`

	Failures   int           `json:"failures,omitempty"`
	Open       bool          `json:"open,omitempty"`
	OpenUntil  time.Time     `json:"open_until,omitzero"`
	Cooldown   time.Duration `json:"cooldown,omitempty"`
	ProbeBy    string        `json:"probe_by,omitempty"`
	ProbeUntil time.Time     `json:"probe_until,omitzero"`
	Accounts   []string      `json:"accounts,omitempty"`

	Paused      bool      `json:"paused,omitempty"`
	PausedUntil time.Time `json:"paused_until,omitzero"`

	Calls []callWire `json:"calls,omitempty"`
}

// encode is s as the store keeps it.
func (s shared) encode() []byte {
	out, err := json.Marshal(s.wire())
	if err != nil {
		panic(err) // numbers, strings and times only: it cannot fail
	}
	return out
}

// wire is s in the record's format.
func (s shared) wire() sharedWire {
	p, b := s.pace, s.breaker
	return sharedWire{
		Unpaced: p.unpaced, Ceiling: p.ceiling, Met: p.met, Starting: p.starting, Rate: p.rate, Burst: p.burst, Tokens: p.tokens,
		FilledAt: p.filledAt, BlockedUntil: p.blockedUntil, BlockedFor: p.blockedFor, Grants: p.grants, SlowedAt: p.slowedAt, SlowedTime: p.slowedTime,
		Failures: b.failures, Open: b.open, OpenUntil: b.openUntil, Cooldown: b.cooldown,
		ProbeBy: b.probeBy, ProbeUntil: b.probeUntil, Accounts: s.accounts,
		Paused: s.paused, PausedUntil: s.pausedUntil, Calls: s.calls.wire(),
	}
}

// decode reads a record's state; false if it is not one (then the caller
// starts afresh, and its next write replaces it).
func decode(data []byte) (shared, bool) {
	var w sharedWire
	if err := json.Unmarshal(data, &w); err != nil {
		return shared{}, false
	}
	return w.shared(), true
}

// shared is the state w keeps.
func (w sharedWire) shared() shared {
	return shared{
		pace: pace{
			unpaced: w.Unpaced, ceiling: w.Ceiling, met: w.Met, starting: w.Starting, rate: w.Rate, burst: w.Burst, tokens: w.Tokens,
			filledAt: w.FilledAt, blockedUntil: w.BlockedUntil, blockedFor: w.BlockedFor, grants: w.Grants, slowedAt: w.SlowedAt, slowedTime: w.SlowedTime,
		},
		breaker: breaker{
			failures: w.Failures, open: w.Open, openUntil: w.OpenUntil, cooldown: w.Cooldown,
			probeBy: w.ProbeBy, probeUntil: w.ProbeUntil,
		},
		accounts: w.Accounts, paused: w.Paused, pausedUntil: w.PausedUntil, calls: callsOf(w.Calls),
	}
}
