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
