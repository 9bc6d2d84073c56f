package queue

import (
	"errors"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/platformerr"
)

// outcomeKind is what a job's run came to, as far as the worker acts on
// it: the small set every middleware decides from (as River's executor
// sorts a job's result once and maps it in one place).
type outcomeKind int

const (
	// kindSucceeded: the run returned no error.
	kindSucceeded outcomeKind = iota
	// kindWaitTurn: the job never ran; its destination refused it a call for
	// now (a *waitFor), and it is parked until then.
	kindWaitTurn
	// kindThrottled: the destination answered 429 (platformerr.Throttled); the
	// job is parked for its Retry-After and spends no attempt.
	kindThrottled
	// kindOutage: a dependency is down, the destination
	// (platformerr.Upstream) or one of ours (CodeUnavailable); waited
	// out, spending no attempt.
	kindOutage
	// kindRefused: the destination refused in a way its owner may fix
	// (platformerr.Refused); retried, spending attempts, whatever its code.
	kindRefused
	// kindOwnFailure: a failure of the job's own (unclassified, a panic,
	// CodeInternal); retried, spending attempts.
	kindOwnFailure
	// kindPermanent: a code that says the message itself is wrong (not
	// Retryable); given up on at once.
	kindPermanent
	// kindInterrupted: the worker is stopping; the message is handed back.
	kindInterrupted
	// kindRedelivered: the job could not be parked; the message comes again.
	kindRedelivered
)

var outcomeNames = [...]string{
	kindSucceeded: "succeeded", kindWaitTurn: "wait_turn", kindThrottled: "throttled", kindOutage: "outage", kindRefused: "refused",
	kindOwnFailure: "own_failure", kindPermanent: "permanent", kindInterrupted: "interrupted", kindRedelivered: "redelivered",
}

func (k outcomeKind) String() string { return outcomeNames[k] }

// outcome is a finished run's error read once (classify): what the
// retry policy, giving up, the observer and the destinations act on.
type outcome struct {
	kind outcomeKind
	// err is the run's error (nil when it succeeded), for the reasons
	// and the dead letter.
	err error
	// wait is, for kindWaitTurn, the wait the destination asked for.
	wait *waitFor
	// retryAfter is, for kindThrottled, the wait the destination asked for.
	retryAfter time.Duration
	// call is what the destinations learn from the run. It is read in its
	// own order, not from kind: a refusal is a call answered even when it
	// carries a 429, and a stop during an answered call still teaches.
	call CallResult
}

// handedBack says whether the message goes back to the broker rather than
// ending here: nothing is given up on.
func (o outcome) handedBack() bool { return o.kind == kindInterrupted || o.kind == kindRedelivered }

// classify is the one place that reads a job's error chain.
func classify(err error) outcome {
	o := outcome{err: err, call: CallResultOf(err)}
	if err == nil {
		return o
	}
	var i *interrupted
	var r *redeliver
	var w *waitFor
	retryAfter, isThrottled := platformerr.ThrottledFor(err)
	isRefused := platformerr.IsRefused(err)
	switch {
	case errors.As(err, &i):
		o.kind = kindInterrupted
	case errors.As(err, &r):
		o.kind = kindRedelivered
	case errors.As(err, &w):
		o.kind, o.wait = kindWaitTurn, w
	case isThrottled:
		o.kind, o.retryAfter = kindThrottled, retryAfter
	case isRefused:
		o.kind = kindRefused
	case !Retryable(err):
		o.kind = kindPermanent
	case platformerr.IsUpstream(err) || domain.IsCode(err, domain.CodeUnavailable):
		o.kind = kindOutage
	default:
		o.kind = kindOwnFailure
	}
	return o
}

// CallResultOf reads err as the outcome of the job's call. A nil error is
// a call answered (a permanent refusal included: the job ended failed,
// the destination answered), and so is a refusal the job is retried after
// (platformerr.Refused).
func CallResultOf(err error) CallResult {
	if err == nil || platformerr.IsRefused(err) {
		return CallResult{}
	}
	if wait, ok := platformerr.ThrottledFor(err); ok {
		return CallResult{Throttled: true, RetryAfter: wait, OfApplication: platformerr.ThrottledScope(err) == platformerr.ScopeApplication}
	}
	var i *interrupted
	if platformerr.IsUpstream(err) && !errors.As(err, &i) {
		return CallResult{Failed: true}
	}
	return CallResult{Abandoned: true}
}
