package dispatch

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/sweep"
	"github.com/oncehq/once/ports"
)

// DefaultRetention is how long dispatched events are kept for
// troubleshooting before the RetentionCleaner deletes them.
const DefaultRetention = 7 * 24 * time.Hour

// RetentionCleaner removes dispatched events older than the retention.
// First whole time slices (ports.OutboxPartitions: dropping a partition
// writes no WAL per row and leaves no dead tuple), then, workspace by
// workspace under row-level security and in bounded batches, the events no
// slice held. Pending, dispatching and dead-lettered events are never
// deleted.
type RetentionCleaner struct {
	discovery  ports.OutboxDiscovery
	partitions ports.OutboxPartitions
	uow        ports.UnitOfWork
	clock      ports.Clock
	retention  time.Duration
	batch      int
}

// NewRetentionCleaner builds a cleaner keeping dispatched events for
// retention (DefaultRetention if <= 0) and deleting at most batch
// (sweep.DefaultBatch if <= 0) per transaction.
func NewRetentionCleaner(discovery ports.OutboxDiscovery, partitions ports.OutboxPartitions, uow ports.UnitOfWork, clock ports.Clock, retention time.Duration, batch int) *RetentionCleaner {
	if retention <= 0 {
		retention = DefaultRetention
	}
	if batch <= 0 {
		batch = sweep.DefaultBatch
	}
	return &RetentionCleaner{discovery: discovery, partitions: partitions, uow: uow, clock: clock, retention: retention, batch: batch}
}

// RunOnce makes the slices ahead, removes every event dispatched before
// now - retention (those of a slice that straddles the horizon wait for
// their slice) and returns about how many went.
func (c *RetentionCleaner) RunOnce(ctx context.Context) (int, error) {
	now := c.clock.Now()
	// A slice that could not be made now (a lock not granted in time) is
	// made at the next run; it does not hold back the removal.
	_, prepareErr := c.partitions.Prepare(ctx, now)
	dropped, rowsBefore, err := c.partitions.DropDispatchedBefore(ctx, now.Add(-c.retention))
	if err != nil {
		return 0, errors.Join(prepareErr, err)
	}
	deleted, err := sweep.Run(ctx, c.uow, sweep.Job{
		Discover: func(ctx context.Context, limit int) ([]uuid.UUID, error) {
			return c.discovery.WorkspacesWithDispatchedBefore(ctx, rowsBefore, limit)
		},
		Delete: func(ctx context.Context, tx ports.Tx, limit int) (int, error) {
			return tx.OutboxDispatch().DeleteDispatchedBefore(ctx, rowsBefore, limit)
		},
		Batch: c.batch,
	})
	return dropped + deleted, errors.Join(prepareErr, err)
}

// Prepare makes the slices ahead without removing anything: what a
// process does as it starts, so the first events it dispatches find their
// slice.
func (c *RetentionCleaner) Prepare(ctx context.Context) (int, error) {
	return c.partitions.Prepare(ctx, c.clock.Now())
}
