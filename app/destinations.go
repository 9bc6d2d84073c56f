package app

import (
	"time"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// newDestinationGate is a worker's pace and circuit breaker per
// destination, with the platforms' published quotas as its start.
func newDestinationGate(clock ports.Clock) *destinations.Gate {
	return destinations.NewGate(destinations.DefaultConfig(), clock)
}

// workerGate adapts a destinations.Gate to the worker's queue.Gate.
type workerGate struct{ gate *destinations.Gate }

func (w workerGate) Try(destination string) (func(queue.CallResult), time.Time, string) {
	permit, wait := w.gate.Try(model.ParseDestination(destination))
	if permit == nil {
		return nil, wait.Until, string(wait.Why)
	}
	return func(r queue.CallResult) { permit.Done(outcomeOf(r)) }, time.Time{}, ""
}

// outcomeOf is what the gate learns from how a job's call went.
func outcomeOf(r queue.CallResult) destinations.Outcome {
	switch {
	case r.Throttled:
		return destinations.Outcome{Kind: destinations.Throttled, RetryAfter: r.RetryAfter}
	case r.Failed:
		return destinations.Outcome{Kind: destinations.Failed}
	case r.Abandoned:
		return destinations.Outcome{Kind: destinations.Abandoned}
	}
	return destinations.Outcome{Kind: destinations.Succeeded}
}

// retryDeadlines are the kinds' own deadlines for transient failures, by
// event type; the others take the worker's default.
func retryDeadlines() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, k := range kinds.All {
		if k.RetryFor > 0 {
			out[k.EventType] = k.RetryFor
		}
	}
	return out
}
