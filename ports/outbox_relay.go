package ports

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// OutboxRelayMarks settles the events a writer relays itself (see
// dispatch.Relay). Such an event is written held: pending, locked_by the
// writer's holder name and next_attempt_at a short hold ahead, so no
// Dispatcher claims it until the hold ends. Both calls change only events
// still pending and held by holder (an event the hold let a Dispatcher
// claim is the Dispatcher's), across any number of workspaces, each
// workspace's events under its own row-level security context (PostgreSQL:
// all in one transaction and one round trip). Both return how many events
// changed.
type OutboxRelayMarks interface {
	// MarkRelayed marks the events dispatched at `at` and clears the hold.
	// events maps a workspace to its event ids. An event a worker already
	// parked (Outbox.Defer) is left as it is, and counted.
	MarkRelayed(ctx context.Context, holder string, events map[uuid.UUID][]uuid.UUID, at time.Time) (int, error)
	// ReleaseHeld hands the events over to the Dispatchers: the hold is
	// cleared, they are due at nextAttemptAt, and lastError (already
	// sanitized) replaces last_error unless it is empty. No attempt is
	// counted: the relay's try is not one of the Dispatcher's.
	ReleaseHeld(ctx context.Context, holder string, events map[uuid.UUID][]uuid.UUID, nextAttemptAt time.Time, lastError string) (int, error)
}
