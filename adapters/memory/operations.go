package memory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Update implements ports.OperationRepository: a finished operation
// keeps its outcome but for a reopen (failed back to pending), and a
// cancel is taken by a pending operation or a running one whose cancel was
// requested, checked under the operation's row lock (changeLocked).
func (r operationRepo) Update(ctx context.Context, op model.Operation) error {
	return r.changeLocked(ctx, op.ID, func(cur *model.Operation) error {
		reopen := cur.Status == model.OperationFailed && op.Status == model.OperationPending
		cancel := op.Status == model.OperationCancelled
		if (cur.Finished() && !reopen) || (cancel && cur.Status != model.OperationPending && !cur.CancelRequested()) {
			return refusedUpdate(op.ID, *cur)
		}
		cur.Status, cur.Error, cur.UpdatedAt = op.Status, op.Error, op.UpdatedAt
		return nil
	})
}

// refusedUpdate is Update's refusal, as PostgreSQL's adapter words it.
func refusedUpdate(id uuid.UUID, cur model.Operation) error {
	cause := ports.ErrOperationStarted
	if cur.Finished() {
		cause = ports.ErrOperationFinished
	}
	return domain.Wrap(domain.CodeInvalidState, cause, fmt.Sprintf("operation %s already %s", id, cur.Status))
}

// RequestCancel implements ports.OperationRepository, as PostgreSQL's
// requestCancel: decided on the row under its lock (changeLocked).
func (r operationRepo) RequestCancel(ctx context.Context, id uuid.UUID, now time.Time) (model.Operation, error) {
	var out model.Operation
	err := r.changeLocked(ctx, id, func(cur *model.Operation) error {
		if cur.Status == model.OperationRunning && !cur.CancelRequested() {
			cur.CancelRequestedAt, cur.UpdatedAt = now, now
		}
		out = *cur
		return nil
	})
	return out, err
}

// changeLocked changes the operation id as apply says, holding the row's
// lock as PostgreSQL's UPDATE does, so that apply's check holds against an
// open transaction changing the same operation: like PostgreSQL it waits
// for that one to end and then sees what it committed (or the operation
// as it was, if it rolled back).
func (r operationRepo) changeLocked(ctx context.Context, id uuid.UUID, apply func(cur *model.Operation) error) error {
	lock := operationRowLock(id)
	for {
		if err := r.t.db.waitRowLock(ctx, r.t, lock); err != nil {
			return err
		}
		err := operationTable.change(r.t, id, func(cur *model.Operation) error {
			if !r.t.db.lockRowLocked(r.t, lock) {
				return errRowLocked // taken since the wait: wait again
			}
			return apply(cur)
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
