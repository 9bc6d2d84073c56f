package queue

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// waitFor is a job that must wait before it runs (again): its
// destination refuses calls for now, or its last run failed in a way
// worth trying later. The worker parks it in the outbox until then
// (ports.JobWaits) and acknowledges the message, so no slot and no
// process holds the wait.
type waitFor struct {
	until time.Time
	wait  model.JobWait
	// asleep, for a job parked to sleep through its destination's
	// outage, is its fellow sleepers.
	asleep *sleepers
}

// wokenBeforeParked says whether the wake of w's fellow sleepers ran
// before w's park committed: its snapshot of the parked jobs may have
// missed w, which would sleep the full outage wait.
func (w *waitFor) wokenBeforeParked() bool { return w.asleep != nil && w.asleep.woken.Load() }

func (w *waitFor) Error() string { return w.wait.Reason }

// redeliver is an error after which the message must come again from the
// broker: the job could not be parked (the database was unreachable).
// Nothing is given up on.
type redeliver struct{ sanitizedError }

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

// later sits between giving up and the slots: a job that must wait, or
// whose run failed in a way worth trying again before its deadline, is
// parked in the outbox until then (waits, with attempts counted as the
// policy says) and its message acknowledged; its slot is handed
// on once the park commits (heldSlot). Anything else goes on to be given
// up on. If parking fails the message comes again from the broker, after
// backoff, and its call ends Abandoned.
// It decides from the outcome takeSlot, which it wraps, read from the
// run's error (jobRun.outcome), not from the error again.
func later(waits ports.JobWaits, policy retryPolicy, now func() time.Time, log *slog.Logger, backoff *parkBackoff, rewake func(down string, workspace uuid.UUID)) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			run := runOf(msg)
			held := &heldSlot{}
			run.held = held
			parkFailed := false
			defer func() { held.end(parkFailed) }()
			out, err := h(msg)
			o := run.outcome
			if o.kind == kindSucceeded || o.kind == kindInterrupted || msg.Context().Err() != nil {
				return out, err // a stop is not the job's failure: it is handed back
			}
			m, decodeErr := FromMessage(msg)
			if decodeErr != nil {
				return out, err
			}
			until, attempts, wait, ok := policy.next(m, o, now())
			if !ok {
				return out, err
			}
			ctx := context.WithoutCancel(msg.Context())
			if perr := waits.Defer(ctx, m, until, attempts, wait); perr != nil {
				parkFailed = true
				held.end(true) // the slot and the token are not held through the wait
				backoff.failedPark(msg.Context())
				rerr := &redeliver{sanitizedError{text: "parking the job failed: " + domain.SanitizeError(perr), cause: perr}}
				run.outcome.kind, run.outcome.err = kindRedelivered, rerr
				return nil, rerr
			}
			backoff.parked()
			retry := o.kind != kindWaitTurn
			if !retry && o.wait.wokenBeforeParked() && rewake != nil {
				rewake(o.wait.asleep.down, m.WorkspaceID)
			}
			run.parked, run.retry = true, retry
			// A failed run that will run again is expected, not yet a
			// fault: Warn. A wait for a destination is routine: Debug.
			level := slog.LevelDebug
			if retry {
				level = slog.LevelWarn
			}
			log.Log(ctx, level, "job parked until it may run again", "message", m.ID, "workspace", m.WorkspaceID,
				"event_type", m.Type, "destination", m.Destination, "until", until, "attempts", attempts, "wait", wait.Kind, "waited_for", wait.For, "reason", wait.Reason)
			return nil, nil
		}
	}
}

// wakeTimeout bounds the wake of one workspace's parked jobs.
const wakeTimeout = 30 * time.Second

// wakeWithin is how long the jobs woken after an outage take to come
// back, at most: spread, so the backlog leaves the worker to the other
// destinations' jobs too instead of coming all at once ahead of them.
const wakeWithin = 30 * time.Second

// wakeParked brings forward, in the outbox, the jobs parked long for a
// destination that answers again (slots.answered), workspace after
// workspace, spread over wakeWithin by how many the worker parked, and at
// most maxEvery apart. A Wake that fails is tried again (retry); if it
// keeps failing they come back at their time all the same.
func wakeParked(waits ports.JobWaits, maxEvery time.Duration, log *slog.Logger, retry wakeRetries) func(destination string, workspaces map[uuid.UUID]int) {
	return func(destination string, workspaces map[uuid.UUID]int) {
		parked := 0
		for _, n := range workspaces {
			parked += n
		}
		every := min(maxEvery, wakeWithin/time.Duration(max(parked, 1)))
		woken := 0
		for ws := range workspaces {
			n, err := retry.do(func() (int, error) {
				ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
				defer cancel()
				return waits.Wake(ctx, ws, model.JobWaitOutage, destination, time.Duration(woken)*every, every)
			})
			woken += n
			if err != nil {
				log.Warn("waking the jobs parked for a destination that is back failed: they come back at their time",
					"destination", destination, "workspace", ws, "error", domain.SanitizeError(err))
			}
		}
		log.Info("destination answers again: its parked jobs are due now", "destination", destination,
			"workspaces", len(workspaces), "jobs", woken, "every", every)
	}
}

// throttledBy is the wait of a job answered 429 by destination.
func throttledBy(destination string) model.JobWait {
	return model.JobWait{Kind: model.JobWaitThrottled, For: destination, Reason: "throttled by " + destination}
}

// retrying is the wait of job m, whose run failed with err and is tried
// again: for m's destination, if it has one (the failure may be ours),
// the failure its reason.
func retrying(m ports.Message, err error) model.JobWait {
	return model.JobWait{Kind: model.JobWaitRetry, For: m.Destination, Reason: domain.SanitizeError(err)}
}

// wakeRetries is how a Wake that failed is tried again: a serialization
// failure after a cancel moved a row, a deadlock between two Wakes or a
// blip of the database would otherwise leave the jobs asleep for the
// full outage wait. At most tries in all, the wait between two doubling
// from initial, ±half.
type wakeRetries struct {
	tries   int
	initial time.Duration
	// sleep waits d (nil: a timer).
	sleep func(context.Context, time.Duration)
}

// defaultWakeRetries try a Wake over about 3.5 s.
var defaultWakeRetries = wakeRetries{tries: 4, initial: 500 * time.Millisecond}

// do runs wake until it succeeds or its tries are spent.
func (r wakeRetries) do(wake func() (int, error)) (int, error) {
	wait := r.initial
	for try := 1; ; try++ {
		n, err := wake()
		if err == nil || try >= r.tries {
			return n, err
		}
		d := wait/2 + rand.N(wait)
		if r.sleep != nil {
			r.sleep(context.Background(), d)
		} else {
			time.Sleep(d)
		}
		wait *= 2
	}
}
