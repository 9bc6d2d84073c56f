package dispatch

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// ReleasedByOperator is the last error of a dead letter an operator
// released (Release).
const ReleasedByOperator = "released by an operator: the job stays given up on, its ordering key's later jobs go on"

// Release retires dead letters of workspace whose jobs were given up on
// without re-driving them: a dead letter holds its ordering key (the
// claim of the key's later events waits for it), and an operator who
// will not run the job again lets the key go on this way. Each event
// becomes dispatched with last_error ReleasedByOperator, in its own
// transaction; its operation stays as it ended (failed). Only a dead
// letter whose operation has ended is released: one the Dispatcher could
// not deliver (its job never ran, its operation still pending) would hold
// its key all the same once dispatched, and is re-driven instead
// (CodeInvalidState). Ids that are not dead letters are left alone.
// Returns how many were released; if none was and one was refused, that
// error. The Dispatchers are woken after.
func (a *Admin) Release(ctx context.Context, workspace uuid.UUID, ids []uuid.UUID) (int, error) {
	if len(ids) > MaxAdminBatch {
		return 0, domain.Errorf(domain.CodeValidation, "at most %d events can be released at once", MaxAdminBatch)
	}
	released := 0
	var refused error
	for _, id := range ids {
		ok, err := a.release(ctx, workspace, id)
		if err != nil && domain.ErrorCode(err).RetrySameKey() {
			return released, err
		}
		if err != nil {
			refused = err
		}
		if ok {
			released++
		}
	}
	if released > 0 && a.signal != nil {
		a.signal.Committed()
	}
	if released == 0 && refused != nil {
		return 0, refused
	}
	return released, nil
}

// release retires one dead letter whose job's operation has ended.
func (a *Admin) release(ctx context.Context, workspace, id uuid.UUID) (bool, error) {
	var done bool
	err := a.uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		done = false
		e, err := tx.Outbox().Get(ctx, id)
		if domain.IsCode(err, domain.CodeNotFound) {
			return nil
		}
		if err != nil || e.Status != model.OutboxDeadLetter {
			return err
		}
		if opID, ok := model.JobOperationID(e.Payload); ok {
			op, err := tx.Operations().Get(ctx, opID)
			if err != nil && !domain.IsCode(err, domain.CodeNotFound) {
				return err
			}
			if err == nil && !op.Finished() {
				return domain.Errorf(domain.CodeInvalidState,
					"event %s: its job never ran to an end (operation %s is %s): re-drive it instead", id, op.ID, op.Status)
			}
		}
		done, err = tx.Outbox().Withdraw(ctx, id, ReleasedByOperator, a.clock.Now())
		return err
	})
	return done, err
}
