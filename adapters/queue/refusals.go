package queue

import "time"

// refusals are the destinations' refusals as the gate last answered
// them, until they end: a message for a destination refused is not
// asked about again before then.
type refusals map[string]Refusal

// of is destination's refusal, if it refuses at now.
func (rs refusals) of(destination string, now time.Time) (Refusal, bool) {
	r, ok := rs[destination]
	if !ok || !r.Until.After(now) {
		return Refusal{}, false
	}
	return r, true
}

// remember keeps destination's refusal r, ending in the future at the
// latest a millisecond from now (or nothing wakes the line), as kept.
func (rs refusals) remember(destination string, r Refusal, now time.Time) Refusal {
	if !r.Until.After(now) {
		r.Until = now.Add(time.Millisecond)
	}
	rs[destination] = r
	return r
}

// forget drops destination's refusal: it granted a call, or one of its
// calls ended and it may take another.
func (rs refusals) forget(destination string) { delete(rs, destination) }

// expire forgets the refusals over at now and says when the soonest of
// the others ends (zero: none); ended hears each destination forgotten.
func (rs refusals) expire(now time.Time, ended func(destination string)) (soonest time.Time) {
	for d, r := range rs {
		if !r.Until.After(now) {
			delete(rs, d)
			ended(d)
			continue
		}
		if soonest.IsZero() || r.Until.Before(soonest) {
			soonest = r.Until
		}
	}
	return soonest
}
