package idempotency

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/sweep"
	"github.com/oncehq/once/ports"
)

// Cleaner deletes expired idempotency records, workspace by workspace under
// row-level security, in bounded batches so no transaction grows large or
// holds locks for long.
type Cleaner struct {
	discovery ports.IdempotencyDiscovery
	uow       ports.UnitOfWork
	clock     ports.Clock
	batch     int
}

// NewCleaner builds a cleaner deleting at most batch (sweep.DefaultBatch
// if <= 0) rows per transaction.
func NewCleaner(discovery ports.IdempotencyDiscovery, uow ports.UnitOfWork, clock ports.Clock, batch int) *Cleaner {
	if batch <= 0 {
		batch = sweep.DefaultBatch
	}
	return &Cleaner{discovery: discovery, uow: uow, clock: clock, batch: batch}
}

// RunOnce deletes every record expired as of now and returns how many.
func (c *Cleaner) RunOnce(ctx context.Context) (int, error) {
	now := c.clock.Now()
	return sweep.Run(ctx, c.uow, sweep.Job{
		Discover: func(ctx context.Context, limit int) ([]uuid.UUID, error) {
			return c.discovery.WorkspacesWithExpiredIdempotency(ctx, now, limit)
		},
		Delete: func(ctx context.Context, tx ports.Tx, limit int) (int, error) {
			return tx.Idempotency().DeleteExpired(ctx, now, limit)
		},
		Batch: c.batch,
	})
}
