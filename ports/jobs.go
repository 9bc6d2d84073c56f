package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// JobFailures records that a worker gave up on a job, so the job ends and
// operators see it. The queue adapter calls it once per message it stops
// retrying, then acknowledges the message.
type JobFailures interface {
	// GiveUp ends, in one transaction, the job msg carries: its task and
	// operation failed with a reason fit for the user (the client-safe
	// message of a domain error, else a generic one), its outbox event
	// dead-lettered with cause, sanitized, and attempts (how many times
	// the worker ran the job in this delivery: its first run and its
	// retries), so operators can list and re-drive it. A job already
	// finished is left as it is. An error means nothing was recorded: the
	// message must be delivered again.
	GiveUp(ctx context.Context, msg Message, cause error, attempts int) error
}

// JobWaits parks a job that must wait (its destination's breaker open or
// pace spent, a transient failure's backoff) durably, so the worker gives
// its slot back at once and a restart loses no wait: the queue adapter
// calls Defer, then acknowledges the message.
type JobWaits interface {
	// Defer puts msg's event back in the outbox, pending from until, so the
	// Dispatcher publishes it again then, with job_attempts = attempts
	// (msg.Attempts when the wait is not the job's fault, one more when
	// it is), the wait's kind and destination, and its reason (sanitized
	// here) as last_error for operators. An
	// event that is gone, dead-lettered or already pending, or whose job
	// ended (msg is a late duplicate), is left as it is (nil). An error means nothing was recorded: the message must be
	// delivered again.
	Defer(ctx context.Context, msg Message, until time.Time, attempts int, wait model.JobWait) error
	// Wake brings forward the jobs of workspace parked for kind and
	// waitedFor (a Defer's wait.Kind and wait.For) and still asleep beyond
	// now + within: what they waited for is over sooner than they were
	// parked for. They are due from now, in their order, spread over
	// within by how many it moves (every worker's), at most every apart;
	// those due within already (an earlier Wake's) are left as they are.
	// It returns how many it moved.
	Wake(ctx context.Context, workspace uuid.UUID, kind model.JobWaitKind, waitedFor string, within, every time.Duration) (int, error)
}

// MessageHandler processes one delivered message. Delivery is at-least-once:
// a handler must be re-entrant, so a duplicate has no second effect. An
// error means "not done": the message is delivered again, and after the
// retries the worker gives up on the job (JobFailures); domain.CodeValidation
// and other permanent codes may be given up on at once.
type MessageHandler interface {
	Handle(ctx context.Context, msg Message) error
}

// MessageHandlerFunc adapts a function to MessageHandler.
type MessageHandlerFunc func(ctx context.Context, msg Message) error

func (f MessageHandlerFunc) Handle(ctx context.Context, msg Message) error { return f(ctx, msg) }
