package queue

import (
	"math/rand/v2"
	"time"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// retryPolicy decides, for a job whose run failed transiently, when it
// runs again and whether it still may.
type retryPolicy struct {
	// MaxAttempts bounds the runs that failed by the job's own fault (an
	// unclassified error, a panic); waits for its destination, or for a
	// dependency of ours that is unavailable, count none.
	maxAttempts int
	// deadline is how long after its commit a job of an event type may
	// keep trying transient failures (deadlines[type], else fallback).
	deadlines map[string]time.Duration
	fallback  time.Duration
	// The wait after the n-th own failure is initial × multiplier^(n-1),
	// at most maxInterval, ±randomization; after a destination's failure
	// it grows with the job's age instead (a quarter of it, within the same
	// bounds), since those spend no attempt.
	initial, maxInterval time.Duration
	multiplier, jitter   float64
}

// deadline is when a job of m's type stops trying.
func (p retryPolicy) deadline(m ports.Message, now time.Time) time.Time {
	d, ok := p.deadlines[m.Type]
	if !ok {
		d = p.fallback
	}
	created := m.CreatedAt
	if created.IsZero() {
		created = now
	}
	return created.Add(d)
}

// next is when the job m, whose run came to o at now, runs again, with
// how many own attempts it will have spent and what it waits for, or
// false to give up.
func (p retryPolicy) next(m ports.Message, o outcome, now time.Time) (until time.Time, attempts int, wait model.JobWait, ok bool) {
	attempts = m.Attempts
	w := o.wait
	switch o.kind {
	case kindWaitTurn:
		until, wait = w.until, w.wait
	case kindThrottled:
		until, wait = now.Add(max(o.retryAfter, time.Second)), throttledBy(m.Destination)
	case kindPermanent:
		return until, attempts, wait, false
	case kindOutage:
		// A dependency that is down, the destination or one of ours (the
		// database failing over, the object store), is waited out like
		// an outage: it is not the job's fault, and a count of attempts
		// that a minute's outage spends would fail jobs that are fine.
		age := now.Sub(m.CreatedAt)
		if m.CreatedAt.IsZero() {
			age = 0
		}
		until, wait = now.Add(p.spread(min(max(age/4, p.initial), p.maxInterval))), retrying(m, o.err)
	case kindRefused, kindOwnFailure:
		// A destination's refusal (platformerr.Refused) is tried again as a
		// failure of the job's own, whatever its code: it spends attempts.
		attempts++
		if attempts > p.maxAttempts {
			return until, attempts, wait, false
		}
		backoff := float64(p.initial)
		for range attempts - 1 {
			backoff *= p.multiplier
		}
		until, wait = now.Add(p.spread(min(time.Duration(backoff), p.maxInterval))), retrying(m, o.err)
	default: // succeeded, or handed back: nothing to retry
		return until, attempts, wait, false
	}
	if w != nil && w.wait.Kind.TakesATurn() {
		// Waiting its turn is not failing: a backlog paced longer than
		// the deadline is served in its turn, not failed for its length.
		return until, attempts, wait, true
	}
	if deadline := p.deadline(m, now); until.After(deadline) {
		if w == nil || !now.Before(deadline) {
			return until, attempts, wait, false
		}
		// A wait for the destination ends at the deadline at the latest,
		// where the job asks once more before it gives up.
		until = deadline
	}
	return until, attempts, wait, true
}

// spread randomizes wait by ±jitter, so jobs that failed together do not
// come back together.
func (p retryPolicy) spread(wait time.Duration) time.Duration {
	f := 1 + p.jitter*(2*rand.Float64()-1)
	return time.Duration(float64(wait) * f)
}
