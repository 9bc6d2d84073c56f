package jobs

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/ports"
)

// ReasonGaveUp is what a user reads on an operation whose job failed in a
// way the worker could not classify, when no safer reason is at hand.
const ReasonGaveUp = "the job failed and was stopped; an operator can retry it"

// Failures ends the jobs a worker gives up on, and reopens them when an
// operator re-drives them; it also ends the jobs users cancel (Cancel).
// It is the one place where a job of any type ends without its handler's
// say, so every task type behaves the same:
// task and operation failed with a sanitized reason, the event in the
// operators' dead letters; on re-drive, task and operation back to pending
// and the event delivered again.
type Failures struct {
	uow   ports.UnitOfWork
	clock ports.Clock
	log   *slog.Logger
	tasks map[string]Task // by operation kind
}

var (
	_ ports.JobFailures = (*Failures)(nil)
	_ ports.JobWaits    = (*Failures)(nil)
)

// NewFailures builds the use case for the task kinds (their failure
// hooks, by operation kind); log may be nil.
func NewFailures(uow ports.UnitOfWork, clock ports.Clock, log *slog.Logger, kinds ...Kind) *Failures {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	byKind := make(map[string]Task, len(kinds))
	for _, k := range kinds {
		byKind[k.OperationKind] = k.Task
	}
	return &Failures{uow: uow, clock: clock, log: log, tasks: byKind}
}

// GiveUp implements ports.JobFailures. A message without a workspace
// cannot come from the outbox and has no row to record on: it is logged
// and dropped, as is a message that is not the outbox event of its id
// (Stored): it fails nothing. A job whose operation already ended (a
// duplicate that failed after the first delivery finished) is left as it
// is.
func (f *Failures) GiveUp(ctx context.Context, msg ports.Message, cause error, attempts int) error {
	reason, lastError := UserReason(cause), domain.SanitizeError(cause)
	if lastError == "" {
		lastError = reason
	}
	lastError = domain.SanitizeText(model.JobFailure(attempts, lastError))
	log := domain.LogWithin(ctx, f.log.With("message", msg.ID, "event_type", msg.Type, "workspace", msg.WorkspaceID))
	if msg.WorkspaceID == uuid.Nil {
		log.Error("job given up, message has no workspace: dropped", "error", lastError)
		return nil
	}
	var ended model.Operation
	forged := false
	err := f.uow.Transact(ctx, msg.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		ended, forged = model.Operation{}, false
		if _, err := Stored(ctx, tx, msg); domain.IsCode(err, domain.CodeNotFound) {
			// The operation its payload names is no job of this message:
			// failing it would let a forged message fail anyone's.
			forged = true
			return nil
		} else if err != nil {
			return err
		}
		opID, ok := model.JobOperationID(msg.Payload)
		if !ok {
			opID = uuid.Nil
		}
		if ok {
			op, err := tx.Operations().Get(ctx, opID)
			if err != nil && !domain.IsCode(err, domain.CodeNotFound) {
				return err
			}
			if err == nil && op.Finished() {
				return nil
			}
			if err == nil {
				if err := f.fail(ctx, tx, op, reason); err != nil {
					return err
				}
				ended = op
			}
		}
		dead, err := tx.Outbox().DeadLetterJob(ctx, msg.ID, max(attempts, 0), lastError)
		if err != nil || !dead {
			return err
		}
		return webhooks.DeadLettered(ctx, tx, msg.WorkspaceID, msg.ID, msg.Type, opID, f.clock.Now())
	})
	if errors.Is(err, ports.ErrOperationFinished) {
		// A concurrent delivery ended the job after the read above: its
		// outcome stands, as for one ended before.
		log.Info("job given up, but a concurrent delivery finished it: left as it is", "error", lastError)
		return nil
	}
	if err != nil {
		return err
	}
	if forged {
		log.Warn("job given up, message is not an event of the outbox (forged, deleted by retention, or lost with its commit in a failover): dropped", "error", lastError)
		return nil
	}
	if ended.ID != uuid.Nil {
		log.Warn("job given up: task and operation failed, event dead-lettered", "operation", ended.ID, "error", lastError)
	} else {
		log.Warn("job given up, event dead-lettered", "error", lastError)
	}
	return nil
}

// Defer implements ports.JobWaits: msg's event, in one transaction of its
// workspace, is parked until `until` with the job's attempts and wait, its
// reason sanitized. Task and operation stay as they
// are: the job is not over, only later. A message without a workspace
// cannot come from the outbox and has no row to park: logged and dropped,
// as GiveUp does.
func (f *Failures) Defer(ctx context.Context, msg ports.Message, until time.Time, attempts int, wait model.JobWait) error {
	log := domain.LogWithin(ctx, f.log.With("message", msg.ID, "event_type", msg.Type, "workspace", msg.WorkspaceID))
	wait.Reason = domain.SanitizeText(wait.Reason)
	if msg.WorkspaceID == uuid.Nil {
		log.Error("job deferred, message has no workspace: dropped", "wait", wait.Kind, "reason", wait.Reason)
		return nil
	}
	var parked bool
	err := f.uow.Transact(ctx, msg.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		parked, err = tx.Outbox().Defer(ctx, msg.ID, until, attempts, wait)
		return err
	})
	if err == nil && !parked {
		// Gone, dead-lettered, parked already by a duplicate delivery, or
		// ended (this delivery is a late duplicate of a job that is over).
		log.Debug("job deferred, but its event is not in flight or its job ended: left as it is", "wait", wait.Kind, "reason", wait.Reason)
	}
	return err
}

// Wake implements ports.JobWaits: in one transaction of workspace, the
// events parked for kind and waitedFor and asleep beyond now + within are
// due from now, spread over within, at most every apart, in their order.
func (f *Failures) Wake(ctx context.Context, workspace uuid.UUID, kind model.JobWaitKind, waitedFor string, within, every time.Duration) (int, error) {
	var n int
	err := f.uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		var err error
		n, err = tx.Outbox().Wake(ctx, kind, waitedFor, f.clock.Now(), within, every)
		return err
	})
	return n, err
}

// UserReason is what a user reads on an operation whose job was given up
// because of cause: the client-safe message of a domain error (sanitized
// all the same), else ReasonGaveUp. Driver errors and the like say nothing
// a user can act on and may name internal hosts, so they are not shown.
func UserReason(cause error) string {
	var de *domain.Error
	if errors.As(cause, &de) {
		if m := domain.SanitizeText(de.Message); m != "" {
			return m
		}
	}
	return ReasonGaveUp
}

// fail ends op and its task failed with reason, the task first, as a
// job's End writes them (see TaskRow.End).
func (f *Failures) fail(ctx context.Context, tx ports.Tx, op model.Operation, reason string) error {
	now := f.clock.Now()
	if task := f.tasks[op.Kind]; task != nil {
		if err := task.Fail(ctx, tx, op, reason, now); err != nil {
			return err
		}
	}
	op.Fail(reason, now)
	return SaveEnded(ctx, tx, op)
}

// Reopen prepares, in tx, the re-drive of a dead-lettered event: if its
// operation failed (its worker gave up), the job's task and operation go
// back to pending so the next delivery runs it. Other events (never
// delivered, or whose operation is gone) need nothing. A task that cannot
// be reopened (a newer one took its place) is the repository's domain
// error, e.g. CodeSyncAlreadyActive; the caller re-drives the event in the
// same transaction, so then it stays a dead letter.
func (f *Failures) Reopen(ctx context.Context, tx ports.Tx, event model.OutboxEvent) error {
	opID, ok := model.JobOperationID(event.Payload)
	if !ok {
		return nil
	}
	op, err := tx.Operations().Get(ctx, opID)
	if domain.IsCode(err, domain.CodeNotFound) {
		return nil
	}
	if err != nil || op.Status != model.OperationFailed {
		return err
	}
	now := f.clock.Now()
	if task := f.tasks[op.Kind]; task != nil {
		if err := task.Reopen(ctx, tx, op, now); err != nil {
			return err
		}
	}
	op.Reopen(now)
	return tx.Operations().Update(ctx, op)
}
