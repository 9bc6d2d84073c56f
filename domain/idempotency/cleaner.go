package idempotency

import (
	"context"

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

// NewCleaner builds a cleaner deleting at most batch rows per transaction.
func NewCleaner(discovery ports.IdempotencyDiscovery, uow ports.UnitOfWork, clock ports.Clock, batch int) *Cleaner {
	if batch <= 0 {
		batch = 500
	}
	return &Cleaner{discovery: discovery, uow: uow, clock: clock, batch: batch}
}

// RunOnce deletes every record expired as of now and returns how many.
func (c *Cleaner) RunOnce(ctx context.Context) (int, error) {
	now := c.clock.Now()
	total := 0
	for {
		workspaces, err := c.discovery.WorkspacesWithExpiredIdempotency(ctx, now, 100)
		if err != nil {
			return total, err
		}
		if len(workspaces) == 0 {
			return total, nil
		}
		deletedThisRound := 0
		for _, ws := range workspaces {
			for {
				var n int
				err := c.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
					var err error
					n, err = tx.Idempotency().DeleteExpired(ctx, now, c.batch)
					return err
				})
				if err != nil {
					return total, err
				}
				total += n
				deletedThisRound += n
				if n < c.batch {
					break
				}
				if err := ctx.Err(); err != nil {
					return total, err
				}
			}
		}
		if deletedThisRound == 0 {
			// Discovery and deletion disagree (clock skew between them, say);
			// stop rather than spin.
			return total, nil
		}
	}
}
