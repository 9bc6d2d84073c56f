package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// OutboxDispatch is the Dispatcher's side of the outbox, bound to one
// transaction of one workspace (row-level security applies: without a
// workspace nothing is seen or claimed). Every change after a claim is
// fenced by owner: a call from an instance whose lease was taken over by
// another changes nothing and reports so.
type OutboxDispatch interface {
	// ClaimDue claims due events, skipping rows other transactions have
	// locked (FOR UPDATE SKIP LOCKED): up to limit pending events whose
	// next_attempt_at <= now, oldest due first, and at most one dispatching
	// event whose lease expired (locked_until <= now), the oldest lease
	// first. Claimed events become dispatching with locked_by = owner and
	// locked_until = now + lease; the returned events show that state.
	//
	// Taking over an expired lease counts an attempt (attempt_count + 1,
	// last_error = model.LeaseExpiredError): the Dispatcher that held it
	// crashed or hung, maybe because of this event. An event whose
	// attempts reach maxAttempts that way is dead-lettered instead of
	// claimed. One takeover per claim keeps a poison event apart from the
	// events that were claimed with it: they are taken over one by one,
	// each with its own publish, and the poison one cannot take them down
	// with it again.
	ClaimDue(ctx context.Context, owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (Claim, error)

	// Postpone returns claimed events to pending at nextAttemptAt without
	// counting an attempt: their publish failed for a reason that was not
	// theirs (the broker was unreachable, or this Dispatcher is shutting
	// down). lastError (already sanitized) replaces last_error unless it
	// is empty. Fenced by owner; returns how many changed.
	Postpone(ctx context.Context, owner string, ids []uuid.UUID, nextAttemptAt time.Time, lastError string) (int, error)

	// MarkDispatched marks the events dispatched at `at`, but only those
	// still dispatching and locked by owner. Returns how many it settled:
	// those it marked, and those a worker already parked
	// (Outbox.Defer), which it leaves as they are. Fewer than ids means
	// the rest were taken over.
	MarkDispatched(ctx context.Context, owner string, ids []uuid.UUID, at time.Time) (int, error)

	// Release returns a failed event to pending: attempt_count + 1,
	// next_attempt_at, last_error (already sanitized), lock cleared. Fenced
	// by owner; false if the event was not ours any more.
	Release(ctx context.Context, owner string, id uuid.UUID, nextAttemptAt time.Time, lastError string) (bool, error)

	// DeadLetter parks an event that failed too often: attempt_count + 1,
	// status dead_letter, failed_in delivery, last_error kept for
	// operators. Fenced by owner.
	DeadLetter(ctx context.Context, owner string, id uuid.UUID, lastError string) (bool, error)

	// Redrive moves dead-lettered events back to pending with attempt_count
	// and job_attempts 0 (the job starts over), failed_in cleared and
	// next_attempt_at = now;
	// ids nil means all of this workspace's. Events that are not
	// dead-lettered are left alone. Returns how many moved.
	Redrive(ctx context.Context, ids []uuid.UUID, now time.Time) (int, error)

	// DeleteDispatchedBefore deletes up to limit events dispatched before
	// `before` and returns how many.
	DeleteDispatchedBefore(ctx context.Context, before time.Time, limit int) (int, error)
}

// OutboxClaims is the Dispatcher's hot path: ClaimDue and MarkDispatched
// of OutboxDispatch, with the same effects and fencing, each as a
// transaction of its own in workspace (row-level security applies), sent
// with the workspace context in one round trip instead of BEGIN,
// set_config, the statement and COMMIT one after another. Optional: a
// Dispatcher without one runs them through its UnitOfWork.
type OutboxClaims interface {
	// ClaimDue is OutboxDispatch.ClaimDue in a transaction of its own.
	ClaimDue(ctx context.Context, workspace uuid.UUID, owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (Claim, error)
	// MarkDispatched is OutboxDispatch.MarkDispatched in a transaction of
	// its own.
	MarkDispatched(ctx context.Context, workspace uuid.UUID, owner string, ids []uuid.UUID, at time.Time) (int, error)
}

// Claim is what one ClaimDue took.
type Claim struct {
	// Events are pending events, now dispatching under the caller's lease,
	// oldest due first.
	Events []model.OutboxEvent
	// TakenOver holds at most one event whose previous lease expired, now
	// dispatching under the caller's lease with the takeover counted.
	TakenOver []model.OutboxEvent
	// DeadLettered are the events whose lease had expired once too often:
	// now dead_letter, not claimed.
	DeadLettered []uuid.UUID
}

// OutboxDiscovery tells, without any workspace context and without reading
// rows, which workspaces have outbox work. It is the narrow cross-workspace
// means: it returns workspace ids or counts, never rows (PostgreSQL: SECURITY
// DEFINER functions).
type OutboxDiscovery interface {
	// WorkspacesWithDueEvents returns, in id order, up to limit workspaces
	// whose id is greater than after (uuid.Nil: from the start) with events
	// due at now (pending and due, or dispatching with an expired lease).
	// after is the caller's cursor, so every due workspace gets its turn
	// however many there are.
	WorkspacesWithDueEvents(ctx context.Context, now time.Time, after uuid.UUID, limit int) ([]uuid.UUID, error)
	// WorkspacesWithDispatchedBefore returns up to limit workspaces holding
	// events dispatched before `before` (for the retention cleanup).
	WorkspacesWithDispatchedBefore(ctx context.Context, before time.Time, limit int) ([]uuid.UUID, error)
	// Stats counts events per status over all workspaces, and the age at now
	// of the oldest due event (0 when none is due). Counts only. The
	// dispatched count may be an estimate once the history is large (the
	// PostgreSQL adapter's is, past 64 MB of it), so that a scrape costs
	// the same at any size; the others are exact.
	Stats(ctx context.Context, now time.Time) (OutboxStats, error)
}

// OutboxStats are the numbers operators watch.
type OutboxStats struct {
	ByStatus     map[model.OutboxStatus]int64
	OldestDueAge time.Duration
}

// DispatchSignal wakes Dispatchers soon after events are committed, so they
// do not wait for their next poll.
type DispatchSignal interface {
	// Committed is called after a transaction that appended events has
	// committed (never inside it: a NOTIFY in the business transaction would
	// serialize every producer's commit). It never blocks; calls coalesce.
	Committed()
	// Wake yields soon after Committed was called, in this process or, with
	// PostgreSQL, in any process. Spurious wake-ups are allowed.
	Wake() <-chan struct{}
}
