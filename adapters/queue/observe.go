package queue

import (
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

type nopObserver struct{}

func (nopObserver) JobStarted(string)                      {}
func (nopObserver) JobWaited(string)                       {}
func (nopObserver) JobRetried(string)                      {}
func (nopObserver) JobEnded(string, string, time.Duration) {}

// observeOutcome sits just inside giveUp, where a job's end is known: an
// error here is given up on unless it is a shutdown; without one, the
// handler's domain.JobReport says whether the operation failed.
func observeOutcome(obs JobObserver) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			eventType := message.HandlerNameFromCtx(msg.Context())
			job := startRun(msg, obs, eventType)
			ctx, report := domain.WithJobReport(msg.Context())
			msg.SetContext(ctx)
			out, err := h(msg)
			if job.retry {
				obs.JobRetried(eventType)
			}
			if job.started.IsZero() { // it never got a slot
				if job.parked {
					obs.JobWaited(eventType)
				}
				return out, err
			}
			outcome := OutcomeSucceeded
			switch {
			case job.parked:
				outcome = OutcomeWaiting
			case err != nil && job.outcome.handedBack():
				outcome = OutcomeInterrupted
			case err != nil:
				outcome = OutcomeGivenUp
			case report.OperationFailed():
				outcome = OutcomeFailed
			}
			obs.JobEnded(eventType, outcome, time.Since(job.started))
			return out, err
		}
	}
}
