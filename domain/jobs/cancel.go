package jobs

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// ReasonCancelled is what the task of a job cancelled before it started
// says (its row ends as a failure of its kind, for the operation alone has
// a cancelled state), and the last error of the event withdrawn with it.
const ReasonCancelled = "cancelled by a user before the job started"

// ReasonStopped is what the task of a running job says when the job
// stopped at a user's cancel: before calling the external system again
// (its next start), or midway through a call its kind can stop (Job.Stop).
const ReasonStopped = "cancelled by a user while the job ran; it stopped before finishing"

// Cancel is a user's cancel of the operation id, in tx (the request's
// unit of work, with its idempotency record):
//
//   - pending: its job has not started, so it never will. The operation
//     ends cancelled, its task ends with ReasonCancelled, and its event,
//     if it waits in the outbox (a first delivery, a retry, a worker's
//     wait), is withdrawn so nothing delivers it again. A delivery already
//     in flight finds the operation finished and does nothing: a job's
//     start and the cancel are both an OperationRepository.Update, so
//     whichever comes second sees the first (the end goes through Update,
//     as every end does).
//   - running: the cancel is recorded (CancelRequestedAt); the job stops
//     where its kind can (a kind with Job.Stop midway through its call,
//     every kind at its next start) and otherwise ends with what the
//     external system did.
//   - cancelled already: answered as it is, so a second cancel answers
//     as the first did.
//   - succeeded or failed: domain.CodeOperationFinished.
//
// An operation of another workspace, or none, is domain.CodeNotFound.
func (f *Failures) Cancel(ctx context.Context, tx ports.Tx, id uuid.UUID) (model.Operation, error) {
	op, err := tx.Operations().Get(ctx, id)
	if err != nil {
		return op, err
	}
	now := f.clock.Now()
	if op.Status == model.OperationPending {
		cancelled := op
		cancelled.Cancel(now)
		err := SaveEnded(ctx, tx, cancelled)
		switch {
		case err == nil:
			return cancelled, f.cancelled(ctx, tx, cancelled)
		case !errors.Is(err, ports.ErrOperationStarted) && !errors.Is(err, ports.ErrOperationFinished):
			return op, err
		}
		// The job started first, or the operation ended (another cancel
		// among the ways): see it as it is now.
	}
	if op, err = tx.Operations().RequestCancel(ctx, id, now); err != nil {
		return op, err
	}
	switch op.Status {
	case model.OperationRunning, model.OperationCancelled:
		return op, nil
	}
	return op, domain.Errorf(domain.CodeOperationFinished, "operation %s already %s: nothing is left to cancel", op.ID, op.Status)
}

// cancelled ends the task of op, just cancelled, and withdraws its event.
func (f *Failures) cancelled(ctx context.Context, tx ports.Tx, op model.Operation) error {
	if task := f.tasks[op.Kind]; task != nil {
		if err := task.Fail(ctx, tx, op, ReasonCancelled, op.UpdatedAt); err != nil {
			return err
		}
	}
	events, err := tx.Outbox().ForOperations(ctx, []model.Operation{op})
	if err != nil {
		return err
	}
	if e, ok := events[op.ID]; ok {
		_, err = tx.Outbox().Withdraw(ctx, e.ID, ReasonCancelled, op.UpdatedAt)
	}
	return err
}
