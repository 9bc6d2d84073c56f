package queue

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/oncehq/once/domain"
)

// JobObserver hears what the workers do, for metrics. Calls are made on
// the handling goroutine and must return quickly.
type JobObserver interface {
	// JobStarted reports a job that got a slot (it is in flight until
	// JobEnded).
	JobStarted(eventType string)
	// JobWaited reports a job parked before it ran, to wait for its
	// destination (a breaker open, a pace spent).
	JobWaited(eventType string)
	// JobRetried reports one more attempt of a job after a failure.
	JobRetried(eventType string)
	// JobEnded reports how a job ended (an Outcome) and how long it took,
	// retries included.
	JobEnded(eventType, outcome string, elapsed time.Duration)
}

// Job outcomes as JobObserver reports them.
const (
	// OutcomeSucceeded: the job ran and its operation succeeded.
	OutcomeSucceeded = "succeeded"
	// OutcomeFailed: the job ran and recorded its operation failed, a
	// business outcome (credentials refused, a file that is not an image;
	// domain.ReportOperationFailed); the message is acknowledged.
	OutcomeFailed = "failed"
	// OutcomeGivenUp: the worker gave up on the job (retries spent, or an
	// error it cannot classify): task and operation failed, the event a
	// dead letter for an operator.
	OutcomeGivenUp = "given_up"
	// OutcomeInterrupted: shutdown; the broker delivers it again.
	OutcomeInterrupted = "interrupted"
	// OutcomeWaiting: the job was parked in the outbox to run later (its
	// destination refused calls for a while, or its run failed in a way
	// worth trying again); the Dispatcher delivers it then.
	OutcomeWaiting = "waiting"
)

// parking is what later tells observeOutcome about a job it parked.
type parking struct {
	parked bool
	// retry: the run failed (as opposed to never starting for its
	// destination), so the job runs again.
	retry bool
}

type parkingKey struct{}

// noteParked records, for observeOutcome, that msg's job was parked.
func noteParked(msg *message.Message, retry bool) {
	if p, ok := msg.Context().Value(parkingKey{}).(*parking); ok {
		p.parked, p.retry = true, retry
	}
}

type nopObserver struct{}

func (nopObserver) JobStarted(string)                      {}
func (nopObserver) JobWaited(string)                       {}
func (nopObserver) JobRetried(string)                      {}
func (nopObserver) JobEnded(string, string, time.Duration) {}

type attemptsKey struct{}

// run is a job's run as observeOutcome follows it: whether, and when, it
// got a slot.
type run struct {
	obs       JobObserver
	eventType string
	started   time.Time
}

type runKey struct{}

// noteStarted tells observeOutcome that msg's job got a slot.
func noteStarted(msg *message.Message) {
	if r, ok := msg.Context().Value(runKey{}).(*run); ok && r.started.IsZero() {
		r.started = time.Now()
		r.obs.JobStarted(r.eventType)
	}
}

// observeOutcome sits just inside giveUp, where a job's end is known: an
// error here is given up on unless it is a shutdown; without one, the
// handler's domain.JobReport says whether the operation failed.
func observeOutcome(obs JobObserver) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			eventType := message.HandlerNameFromCtx(msg.Context())
			attempts, parked := new(int), new(parking)
			job := &run{obs: obs, eventType: eventType}
			ctx := context.WithValue(context.WithValue(msg.Context(), attemptsKey{}, attempts), parkingKey{}, parked)
			ctx, report := domain.WithJobReport(context.WithValue(ctx, runKey{}, job))
			msg.SetContext(ctx)
			out, err := h(msg)
			if parked.retry {
				obs.JobRetried(eventType)
			}
			if job.started.IsZero() { // it never got a slot
				if parked.parked {
					obs.JobWaited(eventType)
				}
				return out, err
			}
			outcome := OutcomeSucceeded
			switch o := classify(err); {
			case parked.parked:
				outcome = OutcomeWaiting
			case o.handedBack():
				outcome = OutcomeInterrupted
			case o.kind != kindSucceeded:
				outcome = OutcomeGivenUp
			case report.OperationFailed():
				outcome = OutcomeFailed
			}
			obs.JobEnded(eventType, outcome, time.Since(job.started))
			return out, err
		}
	}
}

// attemptsOf is how many times the job msg carries ran in this delivery,
// as countAttempts counted them on the context observeOutcome gave msg
// (giveUp, outside both, reads it after they returned).
func attemptsOf(msg *message.Message) int {
	if n, ok := msg.Context().Value(attemptsKey{}).(*int); ok {
		return *n
	}
	return 0
}

// countAttempts sits inside the retries and counts each attempt for
// observeOutcome.
func countAttempts(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		if n, ok := msg.Context().Value(attemptsKey{}).(*int); ok {
			*n++
		}
		return h(msg)
	}
}
