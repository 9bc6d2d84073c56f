package queue

import (
	"context"
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

// JobObserver hears what the workers do, for metrics. Calls are made on
// the handling goroutine and must return quickly.
type JobObserver interface {
	// JobStarted reports a job taken up (it is in flight until JobEnded).
	JobStarted(eventType string)
	// JobRetried reports one more attempt of a job after a failure.
	JobRetried(eventType string)
	// JobEnded reports how a job ended: "succeeded", "failed" (given up
	// on: recorded as failed, the message acknowledged) or "interrupted"
	// (shutdown: the broker delivers it again), and how long it took,
	// retries included.
	JobEnded(eventType, outcome string, elapsed time.Duration)
}

// Job outcomes as JobObserver reports them.
const (
	OutcomeSucceeded   = "succeeded"
	OutcomeFailed      = "failed"
	OutcomeInterrupted = "interrupted"
)

type nopObserver struct{}

func (nopObserver) JobStarted(string)                      {}
func (nopObserver) JobRetried(string)                      {}
func (nopObserver) JobEnded(string, string, time.Duration) {}

type attemptsKey struct{}

// observeOutcome sits just inside giveUp, where a job's end is known: an
// error here is given up on unless it is a shutdown.
func observeOutcome(obs JobObserver) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			eventType := message.HandlerNameFromCtx(msg.Context())
			start := time.Now()
			attempts := new(int)
			msg.SetContext(context.WithValue(msg.Context(), attemptsKey{}, attempts))
			obs.JobStarted(eventType)
			out, err := h(msg)
			for range max(*attempts-1, 0) {
				obs.JobRetried(eventType)
			}
			outcome := OutcomeSucceeded
			var i *interrupted
			switch {
			case errors.As(err, &i):
				outcome = OutcomeInterrupted
			case err != nil:
				outcome = OutcomeFailed
			}
			obs.JobEnded(eventType, outcome, time.Since(start))
			return out, err
		}
	}
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
