package memory

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Update implements ports.OperationRepository: a finished operation
// keeps its outcome but for a reopen (failed back to pending). It takes
// the operation's row lock, as PostgreSQL's UPDATE does, so that the
// check holds against an open transaction ending the same operation:
// where PostgreSQL would wait for that one and see its outcome, memory
// refuses at once with CodeUnavailable (the caller tries again later and
// then sees the outcome, or finds the operation as it was if that
// transaction rolled back).
func (r operationRepo) Update(_ context.Context, op model.Operation) error {
	return operationTable.change(r.t, op.ID, func(cur *model.Operation) error {
		if !r.t.db.lockRowLocked(r.t, operationRowLock(op.ID)) {
			return domain.Errorf(domain.CodeUnavailable, "operation %s is being changed by a concurrent transaction", op.ID)
		}
		if cur.Finished() && !(cur.Status == model.OperationFailed && op.Status == model.OperationPending) {
			return domain.Wrap(domain.CodeInvalidState, ports.ErrOperationFinished,
				fmt.Sprintf("operation %s already %s", op.ID, cur.Status))
		}
		cur.Status, cur.Error, cur.UpdatedAt = op.Status, op.Error, op.UpdatedAt
		return nil
	})
}

func operationRowLock(id uuid.UUID) uniqueKey { return uniqueKey{"operations_row", id.String()} }

// List pages as every list does (listNewest).
func (r operationRepo) List(_ context.Context, q ports.ListQuery) ([]model.Operation, error) {
	return operationTable.list(r.t, q, func(op model.Operation, q ports.ListQuery) bool {
		return is(model.OperationStatus(q.Status), op.Status) && is(q.Kind, op.Kind)
	})
}
