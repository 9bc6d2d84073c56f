package memory

import (
	"context"
	"errors"
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
// like PostgreSQL it waits for that one to end and then checks the
// outcome it committed (or the operation as it was, if it rolled back).
func (r operationRepo) Update(ctx context.Context, op model.Operation) error {
	lock := operationRowLock(op.ID)
	for {
		if err := r.t.db.waitRowLock(ctx, r.t, lock); err != nil {
			return err
		}
		err := operationTable.change(r.t, op.ID, func(cur *model.Operation) error {
			if !r.t.db.lockRowLocked(r.t, lock) {
				return errRowLocked // taken since the wait: wait again
			}
			if cur.Finished() && !(cur.Status == model.OperationFailed && op.Status == model.OperationPending) {
				return domain.Wrap(domain.CodeInvalidState, ports.ErrOperationFinished,
					fmt.Sprintf("operation %s already %s", op.ID, cur.Status))
			}
			cur.Status, cur.Error, cur.UpdatedAt = op.Status, op.Error, op.UpdatedAt
			return nil
		})
		if !errors.Is(err, errRowLocked) {
			return err
		}
	}
}

// errRowLocked is Update's signal that another transaction took the row
// lock between its wait and its write.
var errRowLocked = errors.New("row locked by another transaction")

func operationRowLock(id uuid.UUID) uniqueKey { return uniqueKey{"operations_row", id.String()} }

// List pages as every list does (listNewest).
func (r operationRepo) List(_ context.Context, q ports.ListQuery) ([]model.Operation, error) {
	return operationTable.list(r.t, q, func(op model.Operation, q ports.ListQuery) bool {
		return is(model.OperationStatus(q.Status), op.Status) && is(q.Kind, op.Kind)
	})
}
