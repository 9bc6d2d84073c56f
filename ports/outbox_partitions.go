package ports

import (
	"context"
	"time"
)

// OutboxPartitions keeps the history of dispatched events in time slices
// that retention removes whole (PostgreSQL: range partitions of
// outbox_events_dispatched, sql/009_outbox_partitions.sql), so keeping
// months of traffic costs neither a large DELETE nor a table that grows.
// A store without slices (the memory store) does nothing here and leaves
// retention to OutboxDispatch.DeleteDispatchedBefore.
type OutboxPartitions interface {
	// Prepare makes the slices for events dispatched from now until a few
	// slices ahead, and returns how many it made. Safe to call from every
	// process at once. An error leaves events correct (they land in a
	// catch-all slice and go row by row at retention).
	Prepare(ctx context.Context, now time.Time) (int, error)
	// DropDispatchedBefore removes every slice whose events were all
	// dispatched before `before`, and returns about how many events went
	// and rowsBefore: the horizon for the row-by-row deletion of what no
	// slice holds (OutboxDispatch.DeleteDispatchedBefore). rowsBefore is at
	// most before; the events of a slice that straddles before stay until
	// the whole slice has expired.
	DropDispatchedBefore(ctx context.Context, before time.Time) (events int, rowsBefore time.Time, err error)
}
