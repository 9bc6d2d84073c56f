package destinations

import (
	"math"
	"time"
)

// How a pace learns from the destination's answers. A 429 is the only
// sign of the destination's real rate, and a bucket's burst delays it: a
// pace a little too fast is answered 429 only once the destination's
// burst is spent, seconds later. So a pace remembers the rate that met
// its last 429 (met) and, as TCP's CUBIC does with the window of its last
// loss, backs off below it, climbs back quickly at first and ever more
// slowly as it nears it, stays there, and only after probeAfter calls
// without a 429 probes beyond it, slowly (the destination's rate may have
// risen, or met may have been low). A pace that climbed back by a fixed
// step up to what it had before the 429 (its ceiling: what it got when the
// first 429 met a flood, far above the destination's rate) was answered
// 429 again within a few calls, about once a second.
const (
	// backOff is the share of the rate that met a 429 the pace goes on at.
	backOff = 0.7
	// closeIn is the share of the way back to met a success climbs.
	closeIn = 0.2
	// minClimb is the least a success below met climbs, a share of met,
	// so the climb gets there rather than only nearer.
	minClimb = 0.02
	// probeAfter is how many calls a pace takes since its last slow-down
	// before it probes beyond met: one 429 per that many calls at most
	// from probing, and the destination's bucket time to show whether
	// met was too fast.
	probeAfter = 20
	// probeStep is how far each success beyond probeAfter raises the rate,
	// a share of met.
	probeStep = 0.005
	// speedUp is how far each success raises a rate slowed down by
	// something else than a 429 learnt (a record from before met), a
	// share of the ceiling.
	speedUp = 0.05
	// minRate is the floor of a learned rate (calls a second): a
	// destination that keeps answering 429 is still asked now and then.
	minRate = 0.1
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
	// unlimited (or starting: newStartingPace) until the first 429. From
	// then on it keeps what it learnt: unlimited again, it met the same
	// 429s in a flood.
	unpaced bool
	// ceiling is the most the rate may learn up to: the configured rate
	// (0 for an unpaced destination: none).
	ceiling float64
	// met is the rate that met the last 429 (0: none yet), which the
	// rate climbs back to and stays at (see backOff).
	met float64
	// starting: the pace has not met a 429 yet and grows (newStartingPace).
	starting bool
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
	// slowedTime is when the last slow-down was (zero: none yet).
	slowedTime time.Time
}

func newPace(q Quota, now time.Time) pace {
	p := pace{unpaced: q.Rate <= 0, ceiling: max(q.Rate, 0), rate: max(q.Rate, 0), burst: q.burst(), filledAt: now}
	p.tokens = p.burst
	return p
}

// newStartingPace is the pace of a bucket whose rate nobody configured
// but which every account of a platform spends together (our
// application's, Config.Applications): unpaced, such a bucket meets a
// worker's first batch of calls for the platform's accounts all at once,
// and by the time the first 429 is learnt the rest of the batch is
// answered 429 too (37 calls at once, 26 429s). So it starts at one
// account's quota, q, which the platform must allow the application as a
// whole (it serves one seller at full speed), and each success adds one
// call a second: the rate doubles in about a second of calls at it, as
// TCP's slow start doubles its window per round trip. A 429 ends the
// start, and the pace learns as any other; a start that reaches
// startEnd without one ends unpaced, nothing learnt. Without a rate in q
// it is unpaced from the start.
func newStartingPace(q Quota, now time.Time) pace {
	p := newPace(q, now)
	p.unpaced, p.ceiling, p.starting = true, 0, p.rate > 0
	return p
}

// startEnd is the rate (calls a second) at which a starting pace that met
// no 429 ends unpaced: beyond a quota of one account by far, and where
// our application's bucket, if any, is no longer in sight.
const startEnd = 1000

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
	p.starting = false
	switch {
	case p.rate == 0:
		// What the destination was getting, burst and all.
		p.met = max(1, recent)
	default:
		p.refill(now)
		p.met = p.rate
		if served, ok := p.servedSince(now); ok {
			p.met = min(p.met, served)
		}
	}
	p.rate = max(minRate, p.met*backOff)
	if p.ceiling > 0 {
		p.rate = min(p.rate, p.ceiling)
	}
	if p.unpaced {
		// The bucket a configured rate without a burst gets, a second's
		// worth, so a call that comes a little late for its token does
		// not lose it: with one token, every late call slowed the pace by
		// its lateness (a learnt 5.4/s served 4.5/s).
		p.burst = max(1, math.Ceil(p.rate))
	}
	// The destination says its bucket is empty: so is ours.
	p.tokens = 0
	p.filledAt = now
	p.slowedAt, p.slowedTime = p.grants, now
}

// servedSince is the rate the destination served since the last
// slow-down, to now: its bucket was full at both 429s, so what it took
// between them is what it leaks, whatever our pace said (a Retry-After's
// wait lowers what a pace sends without lowering its rate, and would
// hide for long how far above the destination's rate the pace is). Not
// if the last slow-down is more than measureWithin ago: the destination
// may have been idle, its bucket empty, meanwhile.
func (p *pace) servedSince(now time.Time) (float64, bool) {
	since := now.Sub(p.slowedTime).Seconds()
	if p.slowedTime.IsZero() || since <= 0 || since > measureWithin.Seconds() {
		return 0, false
	}
	return float64(p.grants-p.slowedAt) / since, true
}

// measureWithin bounds the span servedSince measures over.
const measureWithin = 30 * time.Second

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
	if p.starting {
		if p.rate++; p.rate >= startEnd {
			p.rate, p.starting = 0, false
		}
		return
	}
	switch {
	case p.met == 0:
		// A record slowed down before met was kept: back up to the
		// ceiling, as it was written to.
		p.rate += speedUp * p.ceiling
	case p.rate < p.met:
		p.rate = min(p.met, p.rate+max(closeIn*(p.met-p.rate), minClimb*p.met))
	case p.grants-p.slowedAt > probeAfter:
		p.rate += probeStep * p.met
	}
	if p.ceiling > 0 {
		p.rate = min(p.rate, p.ceiling)
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
	most := p.ceiling
	if p.unpaced {
		most = max(p.met, p.rate)
	}
	if p.rate == 0 || most == 0 {
		return 0
	}
	return seconds(1 / most)
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
