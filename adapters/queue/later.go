package queue

import (
	"context"
	"log/slog"
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
