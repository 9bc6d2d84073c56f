package queue

import (
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The waits a job is parked with, as the outbox keeps them (kind and
// destination in columns of their own, the reason for operators to
// read) and Wake matches them.

// waitingFor is the wait of a message parked for destination's refusal
// why: what the outbox keeps (kind and destination in columns of their
// own, the reason for operators to read), and what Wake matches.
func waitingFor(destination, why string) model.JobWait {
	return model.JobWait{Kind: waitKindOf(why), For: destination, Reason: "waiting for " + destination + ": " + why}
}

// waitKindOf is the kind of wait the destinations' refusal why stands for.
func waitKindOf(why string) model.JobWaitKind {
	switch why {
	case WhyBreakerOpen, WhyProbing:
		return model.JobWaitOutage
	case WhyPaced:
		return model.JobWaitPaced
	case WhyBusy:
		return model.JobWaitBusy
	case WhyPaused:
		return model.JobWaitPaused
	}
	return model.JobWaitStateUnavailable
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
