package dispatch

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/sweep"
	"github.com/oncehq/once/ports"
)

// DefaultRetention is how long dispatched events are kept for
// troubleshooting before the RetentionCleaner deletes them.
const DefaultRetention = 7 * 24 * time.Hour

// RetentionCleaner deletes dispatched events older than the retention,
// workspace by workspace under row-level security, in bounded batches so no
// transaction grows large or holds locks for long. Pending, dispatching and
// dead-lettered events are never deleted.
type RetentionCleaner struct {
	discovery ports.OutboxDiscovery
	uow       ports.UnitOfWork
	clock     ports.Clock
	retention time.Duration
	batch     int
}

// NewRetentionCleaner builds a cleaner keeping dispatched events for
// retention (DefaultRetention if <= 0) and deleting at most batch (500 if
// <= 0) per transaction.
func NewRetentionCleaner(discovery ports.OutboxDiscovery, uow ports.UnitOfWork, clock ports.Clock, retention time.Duration, batch int) *RetentionCleaner {
	if retention <= 0 {
		retention = DefaultRetention
	}
	if batch <= 0 {
		batch = 500
	}
	return &RetentionCleaner{discovery: discovery, uow: uow, clock: clock, retention: retention, batch: batch}
}

// RunOnce deletes every event dispatched before now - retention and returns
// how many.
func (c *RetentionCleaner) RunOnce(ctx context.Context) (int, error) {
	before := c.clock.Now().Add(-c.retention)
	return sweep.Run(ctx, c.uow, sweep.Job{
		Discover: func(ctx context.Context, limit int) ([]uuid.UUID, error) {
			return c.discovery.WorkspacesWithDispatchedBefore(ctx, before, limit)
		},
		Delete: func(ctx context.Context, tx ports.Tx, limit int) (int, error) {
			return tx.OutboxDispatch().DeleteDispatchedBefore(ctx, before, limit)
		},
		Batch: c.batch,
	})
}
