// Package sweep deletes rows that have had their time, workspace by
// workspace under row-level security, in bounded batches: the one loop the
// maintenance jobs (expired idempotency records, old dispatched events,
// finished operations and tasks, old dead letters) share.
package sweep

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

// DiscoveryLimit is how many workspaces one discovery call returns.
const DiscoveryLimit = 100

// DefaultBatch is the rows one transaction deletes when the cleaner is
// given no batch: the cleaners' fallback, and ONCE_CLEANUP_BATCH's default.
const DefaultBatch = 500

// Job describes one sweep.
type Job struct {
	// Discover returns up to limit workspaces that have rows to delete. It
	// runs without a workspace context (ids only).
	Discover func(ctx context.Context, limit int) ([]uuid.UUID, error)
	// Delete deletes up to limit rows of the transaction's workspace and
	// says how many.
	Delete func(ctx context.Context, tx ports.Tx, limit int) (int, error)
	// DeleteIn, set instead of Delete, deletes up to limit rows of ws in a
	// transaction of its own (a port that opens it itself, such as
	// ports.Retention); Run's UnitOfWork is then not used.
	DeleteIn func(ctx context.Context, ws uuid.UUID, limit int) (int, error)
	// Batch bounds each transaction, so none grows large or holds locks for
	// long.
	Batch int
}

// Run deletes everything Discover points at and returns how many rows went.
func Run(ctx context.Context, uow ports.UnitOfWork, job Job) (int, error) {
	deleteIn := job.DeleteIn
	if deleteIn == nil {
		deleteIn = func(ctx context.Context, ws uuid.UUID, limit int) (n int, err error) {
			err = uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
				n, err = job.Delete(ctx, tx, limit)
				return err
			})
			return n, err
		}
	}
	total := 0
	for {
		workspaces, err := job.Discover(ctx, DiscoveryLimit)
		if err != nil || len(workspaces) == 0 {
			return total, err
		}
		deletedThisRound := 0
		for _, ws := range workspaces {
			for {
				n, err := deleteIn(ctx, ws, job.Batch)
				total += n
				deletedThisRound += n
				if err != nil {
					return total, err
				}
				if n < job.Batch {
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
