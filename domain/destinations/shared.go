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
}

func newShared(q Quota, now time.Time) shared { return shared{pace: newPace(q, now)} }

// clone is a copy of s that shares nothing with it.
func (s shared) clone() shared {
	s.accounts = slices.Clone(s.accounts)
	return s
}

// settle brings s to now as any reader would: the bucket refilled, a pause
// whose time is over ended. Two states equal once settled differ in
// nothing a write needs to keep.
func (s *shared) settle(now time.Time) {
	if s.pace.rate > 0 {
		s.pace.refill(now)
	}
	s.pauseAt(now)
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
	Unpaced      bool      `json:"unpaced,omitempty"`
	Ceiling      float64   `json:"ceiling,omitempty"`
	Rate         float64   `json:"rate,omitempty"`
	Burst        float64   `json:"burst,omitempty"`
	Tokens       float64   `json:"tokens,omitempty"`
	FilledAt     time.Time `json:"filled_at"`
	BlockedUntil time.Time `json:"blocked_until,omitzero"`
	Grants       uint64    `json:"grants,omitempty"`
	SlowedAt     uint64    `json:"slowed_at,omitempty"`

	Failures   int           `json:"failures,omitempty"`
	Open       bool          `json:"open,omitempty"`
	OpenUntil  time.Time     `json:"open_until,omitzero"`
	Cooldown   time.Duration `json:"cooldown,omitempty"`
	ProbeBy    string        `json:"probe_by,omitempty"`
	ProbeUntil time.Time     `json:"probe_until,omitzero"`
	Accounts   []string      `json:"accounts,omitempty"`

	Paused      bool      `json:"paused,omitempty"`
	PausedUntil time.Time `json:"paused_until,omitzero"`
}

func (s shared) encode() []byte {
	p, b := s.pace, s.breaker
	out, err := json.Marshal(sharedWire{
		Unpaced: p.unpaced, Ceiling: p.ceiling, Rate: p.rate, Burst: p.burst, Tokens: p.tokens,
		FilledAt: p.filledAt, BlockedUntil: p.blockedUntil, Grants: p.grants, SlowedAt: p.slowedAt,
		Failures: b.failures, Open: b.open, OpenUntil: b.openUntil, Cooldown: b.cooldown,
		ProbeBy: b.probeBy, ProbeUntil: b.probeUntil, Accounts: s.accounts,
		Paused: s.paused, PausedUntil: s.pausedUntil,
	})
	if err != nil {
		panic(err) // numbers, strings and times only: it cannot fail
	}
	return out
}

// decode reads a record's state; false if it is not one (then the caller
// starts afresh, and its next write replaces it).
func decode(data []byte) (shared, bool) {
	var w sharedWire
	if err := json.Unmarshal(data, &w); err != nil {
		return shared{}, false
	}
	return shared{
		pace: pace{
			unpaced: w.Unpaced, ceiling: w.Ceiling, rate: w.Rate, burst: w.Burst, tokens: w.Tokens,
			filledAt: w.FilledAt, blockedUntil: w.BlockedUntil, grants: w.Grants, slowedAt: w.SlowedAt,
		},
		breaker: breaker{
			failures: w.Failures, open: w.Open, openUntil: w.OpenUntil, cooldown: w.Cooldown,
			probeBy: w.ProbeBy, probeUntil: w.ProbeUntil,
		},
		accounts: w.Accounts, paused: w.Paused, pausedUntil: w.PausedUntil,
	}, true
}
