package queue

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

// jobRun is what the middlewares around one message tell each other, in
// one record in the message's context: each field has one writer, and
// the middlewares outside it read it once their handler returned.
type jobRun struct {
	// obs hears the run (observeOutcome; nil: nobody listens).
	obs       JobObserver
	eventType string
	// started is when the job got a slot (takeSlot).
	started time.Time
	// attempts is how many times the job ran in this delivery
	// (countAttempts), for giveUp.
	attempts int
	// outcome is what the run came to: its error classified once, where
	// the run ends (takeSlot), and changed only where a middleware changes
	// that error on its way out: later when it cannot park the job
	// (redelivered), markInterrupted when the worker stops (interrupted).
	// The middlewares outside read it rather than the error; a nil error
	// is a job that ended or was parked, whatever its run came to.
	outcome outcome
	// held is the slot takeSlot leaves for later to let go once it knows
	// whether the job is parked (later; nil: let it go at once).
	held *heldSlot
	// parked: later parked the job; retry: after a failed run, rather
	// than before it ran.
	parked, retry bool
}

type jobRunKey struct{}

// startRun gives msg a new record, heard by obs.
func startRun(msg *message.Message, obs JobObserver, eventType string) *jobRun {
	r := &jobRun{obs: obs, eventType: eventType}
	msg.SetContext(context.WithValue(msg.Context(), jobRunKey{}, r))
	return r
}

// runOf is msg's record; a message the outer middlewares gave none (a
// chain assembled in a test) gets one unheard.
func runOf(msg *message.Message) *jobRun {
	if r, ok := msg.Context().Value(jobRunKey{}).(*jobRun); ok {
		return r
	}
	return startRun(msg, nil, "")
}

// noteStarted records that msg's job got a slot, and tells the observer.
func noteStarted(msg *message.Message) {
	if r := runOf(msg); r.started.IsZero() {
		r.started = time.Now()
		if r.obs != nil {
			r.obs.JobStarted(r.eventType)
		}
	}
}

// countAttempts sits inside the retries and counts each attempt.
func countAttempts(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		runOf(msg).attempts++
		return h(msg)
	}
}
