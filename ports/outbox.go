package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// Outbox records events in the business transaction, bound to one
// transaction of one workspace.
type Outbox interface {
	// Append writes events as pending in this transaction. Each event must
	// belong to the transaction's workspace (domain.CodeForbidden otherwise)
	// and have JobAttempts >= 0 (domain.CodeValidation otherwise);
	// an event whose payload fails
	// model.CheckPayloadSafe is refused with domain.CodeUnsafePayload. An id
	// that already exists is domain.CodeConflict.
	Append(ctx context.Context, events ...model.OutboxEvent) error

	// Get returns one event of this workspace, domain.CodeNotFound otherwise.
	Get(ctx context.Context, id uuid.UUID) (model.OutboxEvent, error)

	// List returns this workspace's events, oldest first, optionally only
	// those with status (empty: all), at most limit of them (limit <= 0
	// returns none).
	List(ctx context.Context, status model.OutboxStatus, limit int) ([]model.OutboxEvent, error)

	// ListDeadLetters returns a page of this workspace's dead-lettered
	// events, newest first, as every list of the API does (ListQuery: its
	// cursor and limit; it has no filter).
	ListDeadLetters(ctx context.Context, q ListQuery) ([]model.OutboxEvent, error)

	// DeadLetterJob parks an event whose job a worker gave up on (retries
	// spent, or a failure it cannot classify), whatever its delivery status:
	// status dead_letter, failed_in job, job_attempts = attempts (the
	// worker's runs of it), last_error = reason (already sanitized, for
	// people only), lock cleared, attempt_count kept. Operators then see it
	// beside the events the Dispatcher could not deliver, and a re-drive
	// runs the job again. False if the event does not exist (e.g. already
	// deleted). A negative attempts is domain.CodeValidation.
	DeadLetterJob(ctx context.Context, id uuid.UUID, attempts int, reason string) (bool, error)

	// Defer parks an event whose job a worker is running, or is about to
	// run, until later (ports.JobWaits): an event dispatched or dispatching
	// (published, perhaps not marked yet), or held by a writer's relay
	// (published by it, not marked yet), becomes pending with
	// next_attempt_at = until, job_attempts = jobAttempts, wait_kind and
	// waited_for = wait's Kind and For, and last_error = wait.Reason
	// (already sanitized; for people only); its lock and dispatched_at are cleared
	// and attempt_count, the Dispatcher's publish attempts, is reset to 0,
	// so a job that waits out an outage never spends them. A pending event
	// that is not held, a dead letter, a missing event, or the event of a
	// job that ended (the operation its payload names succeeded, failed or
	// was cancelled: a late duplicate of its message was turned away):
	// false, nothing changed. A negative jobAttempts is
	// domain.CodeValidation.
	Defer(ctx context.Context, id uuid.UUID, until time.Time, jobAttempts int, wait model.JobWait) (bool, error)

	// Withdraw retires the event of a job whose operation was cancelled
	// before the job started, so that nothing delivers it again: an event
	// waiting in the outbox (pending and held by no relay: its first
	// delivery, a retry or a worker's wait) or parked for an operator
	// (dead_letter) becomes dispatched at `at`, last_error = reason
	// (already sanitized), lock cleared. An event in flight (dispatching,
	// dispatched, or held by a relay), or a missing one: false, nothing
	// changed; its job, if it runs, finds its operation finished.
	Withdraw(ctx context.Context, id uuid.UUID, reason string, at time.Time) (bool, error)

	// ListParked returns this workspace's events whose jobs a worker parked
	// and that nobody has taken up since (model.OutboxEvent.ParkedByWorker:
	// pending, unlocked, with a wait_kind),
	// soonest due first, at most limit of them (limit <= 0 returns none).
	ListParked(ctx context.Context, limit int) ([]model.OutboxEvent, error)

	// Wake makes this workspace's events parked for kind and waitedFor
	// (their wait_kind and waited_for, exactly) and still asleep beyond
	// from + within due from from instead, in the order they were due, so
	// the jobs of an ordering key come back in their order, spaced within
	// divided by how many it moves, at most every apart (at least a
	// microsecond): a backlog comes back at a pace, within `within` however
	// many workers parked it. The worker parked them long for a destination
	// that was down, and it answers again. An event due by from + within
	// (one an earlier Wake brought forward, or parked for less) is left as
	// it is, so a Wake repeated while the woken come back moves only what
	// was parked since. An empty waitedFor wakes none. It returns how many
	// it moved.
	Wake(ctx context.Context, kind model.JobWaitKind, waitedFor string, from time.Time, within, every time.Duration) (int, error)

	// ForOperations returns, by operation id, the event that delivers each
	// of ops' jobs (the event whose payload names the operation and whose
	// aggregate is the operation's resource). Operations without an event
	// (none was written, or retention deleted it) are absent.
	ForOperations(ctx context.Context, ops []model.Operation) (map[uuid.UUID]model.OutboxEvent, error)

	// Undelivered returns a page of the workspace's events to destination
	// that are not dispatched (pending, dispatching or dead-lettered:
	// waiting for their next attempt, or given up on), newest first by id
	// as every list (ListQuery; its filters do not apply): what is stuck on
	// the way to one destination, with its last error.
	Undelivered(ctx context.Context, destination string, q ListQuery) ([]model.OutboxEvent, error)

	// UndeliveredByDestination counts this workspace's events that are not
	// dispatched (as Undelivered) per destination starting with prefix
	// ("webhook/": the deliveries of every webhook endpoint), in
	// destination order. It reads at most limit events (limit <= 0 reads
	// none): when the counts add up to limit, some may be left out, and
	// the others are lower bounds.
	UndeliveredByDestination(ctx context.Context, prefix string, limit int) ([]DestinationUndelivered, error)
}

// DestinationUndelivered is what is not dispatched on the way to one
// destination of a workspace.
type DestinationUndelivered struct {
	Destination string
	// Waiting is how many are pending or dispatching: waiting for their
	// next attempt, or in one.
	Waiting int
	// DeadLetter is how many were given up on (re-drivable).
	DeadLetter int
	// OldestWaiting is when the oldest waiting one was created (zero when
	// none waits).
	OldestWaiting time.Time
	// NextAttempt is the soonest next_attempt_at of the pending ones (zero
	// when none is pending).
	NextAttempt time.Time
	// LastError is the last error of the newest event (by id) that has
	// one, as stored (already sanitized); empty when none has.
	LastError string
}
