// Package jobs holds what every worker does with the job a message names,
// whatever the job: it needs a transaction, so it cannot live in domain.
package jobs

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Operation reads, in tx, the operation a job message names and checks that
// it tracks resourceID as an operation of kind. A message that names
// another operation can never succeed, so that is domain.CodeValidation
// (the queue parks it at once); a missing operation is domain.CodeNotFound.
func Operation(ctx context.Context, tx ports.Tx, operationID uuid.UUID, kind string, resourceID uuid.UUID) (domain.Operation, error) {
	op, err := tx.Operations().Get(ctx, operationID)
	if err != nil {
		return op, err
	}
	if op.Kind != kind || op.ResourceID != resourceID {
		return op, domain.Errorf(domain.CodeValidation, "operation %s is not a %s of %s", op.ID, kind, resourceID)
	}
	return op, nil
}
