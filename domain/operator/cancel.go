package operator

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Canceller cancels an operation in a transaction of its workspace: the
// public API's use case (jobs.Failures.Cancel), so an operator's cancel is
// a user's in every way (idempotent, its end pushed to webhooks, a
// finished operation domain.CodeOperationFinished).
type Canceller interface {
	Cancel(ctx context.Context, tx ports.Tx, id uuid.UUID) (model.Operation, error)
}

// Cancel cancels the operation id of workspace, in a unit of work scoped
// to it. It returns the operation as it is after: cancelled, or running
// with its cancel requested. Errors: Canceller's (CodeNotFound for no such
// operation in workspace, CodeOperationFinished).
func (c *Console) Cancel(ctx context.Context, workspace, id uuid.UUID) (model.Operation, error) {
	return ports.Query(ctx, c.uow, workspace, func(ctx context.Context, tx ports.Tx) (model.Operation, error) {
		return c.cancel.Cancel(ctx, tx, id)
	})
}

// CancelsShown bounds how many cancelled operations Cancels returns.
const CancelsShown = 20

// runningRead bounds how many running operations Cancels reads for those
// whose cancel was requested.
const runningRead = 200

// Cancels is a workspace's recent cancels.
type Cancels struct {
	// Cancelled are its newest cancelled operations, newest first (at most
	// CancelsShown).
	Cancelled []model.Operation
	// Stopping are its running operations whose cancel was requested
	// (their jobs stop where their kinds can), among its newest runningRead
	// running ones, newest first.
	Stopping []model.Operation
}

// Cancels reads a workspace's recent cancels, in a unit of work scoped to
// it, with the lists a user of the workspace reads (GET /v1/operations
// with a status): one workspace, on demand, so no cross-workspace count
// is kept for it.
func (c *Console) Cancels(ctx context.Context, workspace uuid.UUID) (Cancels, error) {
	return ports.Query(ctx, c.uow, workspace, func(ctx context.Context, tx ports.Tx) (Cancels, error) {
		cancelled, err := tx.Operations().List(ctx, ports.ListQuery{Status: string(model.OperationCancelled), Limit: CancelsShown})
		if err != nil {
			return Cancels{}, err
		}
		running, err := tx.Operations().List(ctx, ports.ListQuery{Status: string(model.OperationRunning), Limit: runningRead})
		if err != nil {
			return Cancels{}, err
		}
		out := Cancels{Cancelled: cancelled}
		for _, op := range running {
			if op.CancelRequested() {
				out.Stopping = append(out.Stopping, op)
			}
		}
		return out, nil
	})
}
