package jobs

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Task is what one task type tells the steps every job shares about its
// task row (a store's verification, a media's processing, a transfer, a
// publication, a sync, an AI task). The row is the resource of the
// operation that tracks the job.
type Task interface {
	// OperationKind is the kind of the operations that track this type's
	// jobs.
	OperationKind() string
	// Fail ends the task of op failed with reason (already sanitized),
	// unless it is final already or gone.
	Fail(ctx context.Context, tx ports.Tx, op domain.Operation, reason string, now time.Time) error
	// Reopen puts the task of op, failed because its job gave up, back
	// where a worker takes it up again. A task that cannot be reopened (a
	// newer one took its place) is a domain error with its code, e.g.
	// CodeAlreadyPublished or CodeSyncAlreadyActive.
	Reopen(ctx context.Context, tx ports.Tx, op domain.Operation, now time.Time) error
}

// TaskRow is a Task over a table of task rows: a task type names its
// repository, where its row keeps status, reason (nil if it has none) and
// updated_at, and which statuses mean active, failed and reopened.
type TaskRow[T any, S ~string] struct {
	Kind     string
	Get      func(ctx context.Context, tx ports.Tx, id uuid.UUID) (T, error)
	Save     func(ctx context.Context, tx ports.Tx, row T) error
	State    func(row *T) (status *S, reason *string, updatedAt *time.Time)
	Active   func(S) bool // a worker still has work to do
	Failed   S            // where Fail leaves an active row
	Reopened S            // where Reopen puts a failed row back
}

// TaskTable is the TaskRow of a table whose rows have a domain.TaskStatus
// (transfers, publications, syncs, AI tasks).
func TaskTable[T any](kind string,
	get func(ctx context.Context, tx ports.Tx, id uuid.UUID) (T, error),
	save func(ctx context.Context, tx ports.Tx, row T) error,
	state func(row *T) (*domain.TaskStatus, *string, *time.Time),
) TaskRow[T, domain.TaskStatus] {
	return TaskRow[T, domain.TaskStatus]{Kind: kind, Get: get, Save: save, State: state,
		Active: domain.TaskStatus.Active, Failed: domain.TaskFailed, Reopened: domain.TaskPending}
}

func (r TaskRow[T, S]) OperationKind() string { return r.Kind }

// Fail implements Task.
func (r TaskRow[T, S]) Fail(ctx context.Context, tx ports.Tx, op domain.Operation, reason string, now time.Time) error {
	return r.move(ctx, tx, op, r.Active, r.Failed, reason, now)
}

// Reopen implements Task.
func (r TaskRow[T, S]) Reopen(ctx context.Context, tx ports.Tx, op domain.Operation, now time.Time) error {
	return r.move(ctx, tx, op, func(s S) bool { return s == r.Failed }, r.Reopened, "", now)
}

func (r TaskRow[T, S]) move(ctx context.Context, tx ports.Tx, op domain.Operation, from func(S) bool, to S, reason string, now time.Time) error {
	row, err := r.Get(ctx, tx, op.ResourceID)
	if domain.IsCode(err, domain.CodeNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	status, rowReason, updatedAt := r.State(&row)
	if !from(*status) {
		return nil
	}
	*status, *updatedAt = to, now
	if rowReason != nil {
		*rowReason = reason
	}
	return r.Save(ctx, tx, row)
}
