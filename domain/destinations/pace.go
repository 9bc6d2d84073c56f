package destinations

import (
	"math"
	"time"
)

// How a pace learns from the destination's answers: down by half at a
// 429, up by a twentieth of its ceiling per success (additive increase,
// multiplicative decrease, as TCP does), so it settles just under what the
// destination allows and finds its way back when the destination recovers.
const (
	slowDown = 0.5
	speedUp  = 0.05
	// minRate is the floor of a learned rate (calls a second): a
	// destination that keeps answering 429 is still asked now and then.
	minRate = 0.1
	// unpacedStart is the share, at its first 429, of what a destination
	// without a configured rate was getting that its learned rate starts
	// from.
	unpacedStart = 0.8
	// nearlySpent is the share of its own quota, as a destination reports
	// it in a header, past which the pace stops bursting.
	nearlySpent = 0.8
)

// pace is one destination's token bucket and what it has learned.
//
// A call started before the last slow-down went at the old pace, so its
// outcome teaches nothing about the new one: a burst of 429s from calls
// already in flight halves the rate once, not once each, and their
// successes do not undo the slow-down. grants and slowedAt (a grant's
// number) tell those calls apart.
type pace struct {
	// unpaced: the system has no configured rate, so the pace is
	// unlimited until the first 429, and becomes unlimited again once it
	// has learned its way back up to ceiling.
	unpaced bool
	// ceiling is the most the rate may learn up to: the configured rate,
	// or what an unpaced destination was getting at its first 429.
	ceiling float64
	// rate is the current rate, calls a second (0: unlimited).
	rate   float64
	burst  float64
	tokens float64
	// filledAt is when tokens was last brought up to date.
	filledAt time.Time
	// blockedUntil is when the destination's last Retry-After ends.
	blockedUntil time.Time
	// blockedFor is the length of the Retry-After that set blockedUntil.
	blockedFor time.Duration
	grants     uint64
	slowedAt   uint64
}

func newPace(q Quota, now time.Time) pace {
	p := pace{unpaced: q.Rate <= 0, ceiling: max(q.Rate, 0), rate: max(q.Rate, 0), burst: q.burst(), filledAt: now}
	p.tokens = p.burst
	return p
}

// readyAt is the earliest time a call may start: now, or later.
func (p *pace) readyAt(now time.Time) time.Time {
	if now.Before(p.blockedUntil) {
		return p.blockedUntil
	}
	if p.rate == 0 {
		return now
	}
	p.refill(now)
	if p.tokens >= 1-tokenSlack {
		return now
	}
	return now.Add(seconds((1 - p.tokens) / p.rate))
}

// tokenSlack absorbs the float error of refilling, so a caller that comes
// back at the time readyAt named is not sent away for a nanosecond.
const tokenSlack = 1e-9

// spend takes a token for a call readyAt allowed, and numbers the grant:
// 0 for a call without a rate, which needs no token and so writes
// nothing (its outcome, if it is a 429, teaches the pace its first rate).
func (p *pace) spend() uint64 {
	if p.rate == 0 {
		return 0
	}
	p.tokens--
	p.grants++
	return p.grants
}

// throttled learns from a 429 to the call of grant: no call until
// retryAfter has passed (unknown: one call's worth of the new rate), then
// one, and then the bucket at the rate learned: unless the call predates
// the last slow-down (and the pace has a rate since), a slower one.
// recent is what this process was getting of an unlimited pace, calls a
// second, to start its learning from.
func (p *pace) throttled(now time.Time, grant uint64, retryAfter time.Duration, recent float64) {
	if grant > p.slowedAt || p.rate == 0 {
		p.slowDown(now, recent)
	}
	if retryAfter <= 0 {
		retryAfter = seconds(1 / p.rate)
	}
	if until := now.Add(retryAfter); until.After(p.blockedUntil) {
		// The destination named the time its next call may go: one may.
		p.blockedUntil, p.blockedFor = until, retryAfter
		p.tokens, p.filledAt = 1, until
	}
}

func (p *pace) slowDown(now time.Time, recent float64) {
	if p.rate == 0 {
		p.rate = max(1, unpacedStart*recent)
		p.ceiling = p.rate / unpacedStart
	} else {
		p.refill(now)
		p.rate = max(min(minRate, p.ceiling), p.rate*slowDown)
	}
	// The destination says its bucket is empty: so is ours.
	p.tokens = 0
	p.filledAt = now
	p.slowedAt = p.grants
}

// succeeded learns from a success of the call of grant, which reported
// quotaUsed of quotaLimit (0: no report). Past nearlySpent of its own
// quota the destination is about to refuse: the bucket is treated as
// spent (the next call waits a full interval of the rate, no burst) and
// the rate does not rise.
func (p *pace) succeeded(now time.Time, grant uint64, quotaUsed, quotaLimit int) {
	if p.rate == 0 {
		return
	}
	p.refill(now)
	if quotaLimit > 0 && float64(quotaUsed) >= nearlySpent*float64(quotaLimit) {
		p.tokens = 0
		return
	}
	if grant <= p.slowedAt {
		return
	}
	p.rate = min(p.ceiling, p.rate+speedUp*p.ceiling)
	if p.unpaced && p.rate >= p.ceiling {
		p.rate, p.ceiling = 0, 0
	}
}

// refund gives back the token of grant (0: the call took none): the call
// it was for never reached the destination.
func (p *pace) refund(grant uint64) {
	if grant != 0 && p.rate > 0 {
		p.tokens = min(p.burst, p.tokens+1)
	}
}

// refill brings tokens up to now at the current rate (from filledAt,
// which is in the future while a Retry-After runs).
func (p *pace) refill(now time.Time) {
	if elapsed := now.Sub(p.filledAt); elapsed > 0 {
		p.tokens = min(p.burst, p.tokens+p.rate*elapsed.Seconds())
		p.filledAt = now
	}
}

// interval is the time between two calls at the most the pace may learn
// up to (0: unlimited). Not the current rate: calls held for a turn by
// it would keep a slow-down's spacing after the pace learns its way back
// up (a 429 halving 2/s made 128 held calls go at 1/s for two minutes);
// held for the ceiling's turns, those that come too early wait again.
func (p *pace) interval() time.Duration {
	if p.rate == 0 || p.ceiling == 0 {
		return 0
	}
	return seconds(1 / p.ceiling)
}

// blocked reports whether a Retry-After is still running at now.
func (p *pace) blocked(now time.Time) bool { return now.Before(p.blockedUntil) }

// seconds is s as a Duration, rounded up so a wait is never short.
func seconds(s float64) time.Duration { return time.Duration(math.Ceil(s * float64(time.Second))) }

// recentWindow is how many seconds of grants recentGrants remembers.
const recentWindow = 5

// recentGrants counts grants per second over the last recentWindow
// seconds, in a ring, so an unlimited pace knows what it was getting.
type recentGrants struct {
	since time.Time
	slots [recentWindow]struct {
		second int64
		n      int
	}
}

func (r *recentGrants) add(now time.Time) {
	if r.since.IsZero() {
		r.since = now
	}
	s := now.Unix()
	slot := &r.slots[s%recentWindow]
	if slot.second != s {
		slot.second, slot.n = s, 0
	}
	slot.n++
}

// perSecond is the grants a second over the window (or since the first,
// if that is shorter, but over at least a second).
func (r *recentGrants) perSecond(now time.Time) float64 {
	s, n := now.Unix(), 0
	for _, slot := range r.slots {
		if slot.second > s-recentWindow && slot.second <= s {
			n += slot.n
		}
	}
	span := min(recentWindow, max(1, now.Sub(r.since).Seconds()))
	return float64(n) / span
}
