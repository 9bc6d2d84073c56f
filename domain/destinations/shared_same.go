package destinations

import (
	"slices"
	"time"
)

// same: s and o keep the same record, so a write of o over s would teach
// the fleet nothing. It compares what encode writes, field by field,
// instead of encoding both: that was two JSON encodings per outcome.
// Times are the same if they are the same instant (the record keeps
// neither a monotonic reading nor, for a reader, a meaningful zone).
// Every field of sharedWire must be compared here (TestSameSeesEveryField).
func (s shared) same(o shared) bool {
	p, q := s.pace, o.pace
	b, c := s.breaker, o.breaker
	return p.unpaced == q.unpaced && p.ceiling == q.ceiling && p.met == q.met && p.starting == q.starting &&
		p.rate == q.rate && p.burst == q.burst && p.tokens == q.tokens &&
		p.filledAt.Equal(q.filledAt) && p.blockedUntil.Equal(q.blockedUntil) && p.blockedFor == q.blockedFor &&
		p.grants == q.grants && p.slowedAt == q.slowedAt && p.slowedTime.Equal(q.slowedTime) &&
		b.failures == c.failures && b.open == c.open && b.openUntil.Equal(c.openUntil) && b.cooldown == c.cooldown &&
		b.probeBy == c.probeBy && b.probeUntil.Equal(c.probeUntil) &&
		slices.Equal(s.accounts, o.accounts) && s.paused == o.paused && s.pausedUntil.Equal(o.pausedUntil) &&
		slices.EqualFunc(s.calls, o.calls, func(l, m callLease) bool { return l.name == m.name && l.until.Equal(m.until) })
}

// written is s as a reader of its record would decode it: its own copy,
// its times without the monotonic reading the record does not keep (so a
// state cached from a write compares with the clock as one read would).
// A gate caches what it wrote so, instead of decoding what it just
// encoded.
func (s shared) written() shared {
	s = s.clone()
	p, b := &s.pace, &s.breaker
	for _, t := range []*time.Time{&p.filledAt, &p.blockedUntil, &p.slowedTime, &b.openUntil, &b.probeUntil, &s.pausedUntil} {
		*t = t.Round(0)
	}
	for i := range s.calls {
		s.calls[i].until = s.calls[i].until.Round(0)
	}
	return s
}
