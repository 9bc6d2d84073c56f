// Package jobs is the lifecycle every background job follows, whatever its
// task type, written once: Job and Handler (decode the message, load the
// task with its operation, a finished one is a duplicate, mark both
// running, call the external system outside any transaction, record the
// outcome in a transaction of its own whose log lines follow the commit,
// retry transient errors, end permanent ones failed with a sanitized
// reason); OnRow and OnOperation, the steps over a task table (TaskRow) or
// over an operation on a longer-lived row; and, when the worker gives up,
// Failures, which ends the job and dead-letters its event, reopening it on
// re-drive. A task type declares its Task once (TaskTable, StatusTable:
// its descriptor in kinds.All and its row), its Kind from it (which it
// registers, Register) and its Job in its handler. What builds a job's
// operation and event (model.NewJob) stays in domain: it needs no
// transaction, and the use cases that write it import no ports of this
// package.
package jobs

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/ports"
)

// Operation reads, in tx, the operation a job message names and checks that
// it tracks resourceID as an operation of kind. A message that names
// another operation can never succeed, so that is domain.CodeValidation
// (the queue parks it at once); a missing operation is domain.CodeNotFound.
func Operation(ctx context.Context, tx ports.Tx, operationID uuid.UUID, kind string, resourceID uuid.UUID) (model.Operation, error) {
	op, err := tx.Operations().Get(ctx, operationID)
	if err != nil {
		return op, err
	}
	if op.Kind != kind || op.ResourceID != resourceID {
		return op, domain.Errorf(domain.CodeValidation, "operation %s is not a %s of %s", op.ID, kind, resourceID)
	}
	return op, nil
}

// SaveEnded saves op, which has just ended (succeeded, failed or
// cancelled), in tx,
// with the notifications of its end (webhooks.OperationEnded): the one
// write of an operation's end, so that none ends unannounced and none is
// announced that did not end (both commit, or neither).
func SaveEnded(ctx context.Context, tx ports.Tx, op model.Operation) error {
	if err := tx.Operations().Update(ctx, op); err != nil {
		return err
	}
	return webhooks.OperationEnded(ctx, tx, op)
}
