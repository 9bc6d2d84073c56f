package jobs

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is what one task type tells the steps every job shares about its
// task row (a store's verification, a media's processing, a transfer, a
// publication, a sync, an AI task): how a job given up ends it and how a
// re-drive reopens it. The row is the resource of the operation that
// tracks the job.
type Task interface {
	// Fail ends the task of op failed with reason (already sanitized),
	// unless it is final already or gone.
	Fail(ctx context.Context, tx ports.Tx, op model.Operation, reason string, now time.Time) error
	// Reopen puts the task of op, failed because its job gave up, back
	// where a worker takes it up again. A task that cannot be reopened (a
	// newer one took its place) is a domain error with its code, e.g.
	// CodeSyncAlreadyActive.
	Reopen(ctx context.Context, tx ports.Tx, op model.Operation, now time.Time) error
}

// TaskRow is a Task over a table of task rows: a task type names its
// jobs (Names), its repository, where its row keeps status, reason (nil if
// it has none) and updated_at, and which statuses mean active, failed and
// reopened.
type TaskRow[T any, S ~string] struct {
	Names
	Get      func(ctx context.Context, tx ports.Tx, id uuid.UUID) (T, error)
	Save     func(ctx context.Context, tx ports.Tx, row T) error
	State    func(row *T) (status *S, reason *string, updatedAt *time.Time)
	Active   func(S) bool // a worker still has work to do
	Running  S            // where Start puts a row ("": rows without one)
	Failed   S            // where Fail leaves an active row
	Reopened S            // where Reopen puts a failed row back
	// OperationOf is the operation a row names as its tracker, nil for
	// rows that name none (a store or a media has one operation per job).
	OperationOf func(row T) uuid.UUID
}

// Table is the Task of a table whose rows carry a model.TaskState
// (transfers, publications, syncs, AI tasks), with what a use case needs
// to start one (Begin) and read one (Read).
type Table[T any, P taskRecord[T]] struct {
	TaskRow[T, model.TaskStatus]
	create func(ctx context.Context, tx ports.Tx, row T) error
}

// TaskTable is the Table of a task type: its kind in the list of kinds
// (kinds.All), whose names its jobs go by (see Names), and its repository
// in the transaction (e.g. ports.Repository[ports.AITaskRepository]). The
// row keeps its state in its model.TaskState.
func TaskTable[T any, P taskRecord[T], R TaskRepository[T]](kind kinds.Kind, repo func(ports.Tx) R) Table[T, P] {
	return Table[T, P]{
		TaskRow: TaskRow[T, model.TaskStatus]{
			Names: namesOf(kind),
			Get:   func(ctx context.Context, tx ports.Tx, id uuid.UUID) (T, error) { return repo(tx).Get(ctx, id) },
			Save:  func(ctx context.Context, tx ports.Tx, row T) error { return repo(tx).Update(ctx, row) },
			State: func(row *T) (*model.TaskStatus, *string, *time.Time) {
				s := P(row).State()
				return &s.Status, &s.Reason, &s.UpdatedAt
			},
			OperationOf: func(row T) uuid.UUID { return P(&row).State().OperationID },
			Active:      model.TaskStatus.Active, Running: model.TaskRunning, Failed: model.TaskFailed, Reopened: model.TaskPending,
		},
		create: func(ctx context.Context, tx ports.Tx, row T) error { return repo(tx).Create(ctx, row) },
	}
}

// StatusTable is the TaskRow of a table whose rows have a status of their
// own (a store's verification, a media's processing): the one status in
// which a worker has work to do (where a re-drive puts the row back) and
// the one a job given up leaves.
func StatusTable[T any, S ~string, R TaskRepository[T]](kind kinds.Kind, repo func(ports.Tx) R,
	state func(row *T) (status *S, reason *string, updatedAt *time.Time), active, failed S,
) TaskRow[T, S] {
	return TaskRow[T, S]{
		Names:  namesOf(kind),
		Get:    func(ctx context.Context, tx ports.Tx, id uuid.UUID) (T, error) { return repo(tx).Get(ctx, id) },
		Save:   func(ctx context.Context, tx ports.Tx, row T) error { return repo(tx).Update(ctx, row) },
		State:  state,
		Active: func(s S) bool { return s == active }, Failed: failed, Reopened: active,
	}
}

// taskRecord is a task row that embeds its model.TaskState.
type taskRecord[T any] interface {
	*T
	State() *model.TaskState
}

// TaskRepository is the part of a task table's repository the lifecycle
// uses (Create only where the table is a Table).
type TaskRepository[T any] interface {
	Create(ctx context.Context, row T) error
	Get(ctx context.Context, id uuid.UUID) (T, error)
	Update(ctx context.Context, row T) error
}

// Load reads, in tx, the operation a job names and its task row, and
// checks they belong together: anything else is a message that can never
// succeed (CodeValidation); a missing operation or row is CodeNotFound.
func (r TaskRow[T, S]) Load(ctx context.Context, tx ports.Tx, operationID, taskID uuid.UUID) (model.Operation, T, error) {
	var row T
	op, err := Operation(ctx, tx, operationID, r.OperationKind, taskID)
	if err != nil {
		return op, row, err
	}
	if row, err = r.Get(ctx, tx, taskID); err != nil {
		return op, row, err
	}
	if r.OperationOf != nil && r.OperationOf(row) != op.ID {
		return op, row, domain.Errorf(domain.CodeValidation, "%s task %s is tracked by another operation than %s", r.OperationKind, taskID, op.ID)
	}
	return op, row, nil
}

// Finished reports whether the job ended; row and operation are updated
// together, so either one ending is enough.
func (r TaskRow[T, S]) Finished(op model.Operation, row T) bool {
	status, _, _ := r.State(&row)
	return !r.Active(*status) || op.Finished()
}

// Start marks row and its operation running, in tx, where they are not
// yet (a redelivery after a failed attempt finds them running). The
// operation's row comes first, then the task's, the order Cancel takes
// them in, so that a cancel and a start never wait for each other both.
func (r TaskRow[T, S]) Start(ctx context.Context, tx ports.Tx, op model.Operation, row T, now time.Time) error {
	if op.Status != model.OperationRunning {
		op.Start(now)
		if err := tx.Operations().Update(ctx, op); err != nil {
			return err
		}
	}
	status, _, updatedAt := r.State(&row)
	if r.Running != "" && *status != r.Running {
		*status, *updatedAt = r.Running, now
		return r.Save(ctx, tx, row)
	}
	return nil
}

// End ends row and its operation failed with reason, in tx. Unlike Start
// it writes the row first: End mostly ends a running job, which a cancel
// does not write the row of. The one pending job it ends (Prepare found
// it cannot run) may meet a cancel taking the two rows the other way
// round; PostgreSQL then breaks the deadlock by failing one of them,
// which is retried (the job redelivered, the cancel sent again with its
// key).
func (r TaskRow[T, S]) End(ctx context.Context, tx ports.Tx, op model.Operation, row T, reason string, now time.Time) error {
	if err := r.fail(ctx, tx, row, reason, now); err != nil {
		return err
	}
	op.Fail(reason, now)
	domain.ReportOperationFailed(ctx)
	return SaveEnded(ctx, tx, op)
}

// Stop ends a running job whose cancel a user asked for, in tx, before it
// calls the external system again: its operation cancelled, its row
// failed with ReasonStopped (see Start for the order).
func (r TaskRow[T, S]) Stop(ctx context.Context, tx ports.Tx, op model.Operation, row T, now time.Time) error {
	op.Cancel(now)
	if err := SaveEnded(ctx, tx, op); err != nil {
		return err
	}
	return r.fail(ctx, tx, row, ReasonStopped, now)
}

// fail saves row failed with reason.
func (r TaskRow[T, S]) fail(ctx context.Context, tx ports.Tx, row T, reason string, now time.Time) error {
	status, rowReason, updatedAt := r.State(&row)
	*status, *updatedAt = r.Failed, now
	if rowReason != nil {
		*rowReason = reason
	}
	return r.Save(ctx, tx, row)
}

// EndJob ends a job's task and operation failed with reason in a
// transaction of its own, unless a concurrent delivery finished them
// first.
func (r TaskRow[T, S]) EndJob(ctx context.Context, uow ports.UnitOfWork, workspace, operationID, taskID uuid.UUID, reason string, clock ports.Clock) error {
	return uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		op, row, err := r.Load(ctx, tx, operationID, taskID)
		if err != nil || r.Finished(op, row) {
			return err
		}
		return r.End(ctx, tx, op, row, reason, clock.Now())
	})
}

// Fail implements Task.
func (r TaskRow[T, S]) Fail(ctx context.Context, tx ports.Tx, op model.Operation, reason string, now time.Time) error {
	return r.move(ctx, tx, op, r.Active, r.Failed, reason, now)
}

// Reopen implements Task.
func (r TaskRow[T, S]) Reopen(ctx context.Context, tx ports.Tx, op model.Operation, now time.Time) error {
	return r.move(ctx, tx, op, func(s S) bool { return s == r.Failed }, r.Reopened, "", now)
}

func (r TaskRow[T, S]) move(ctx context.Context, tx ports.Tx, op model.Operation, from func(S) bool, to S, reason string, now time.Time) error {
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

// Begin writes, in tx, row (a new task, see model.NewTaskState) and the
// job that runs it: the row first (a duplicate the database refuses fails
// before anything else is written; the caller rolls back either way), then
// its pending operation and the outbox event that asks a worker for it.
// The operation and the event are made at the row's CreatedAt, and the
// row is written naming the operation; payload builds the event's payload
// (see model.JobSpec), route where the job goes. It returns the row as
// written and the operation.
func (t Table[T, P]) Begin(ctx context.Context, tx ports.Tx, ids model.IDSource, p model.Principal, row T,
	route Route, payload func(model.JobOperation) any,
) (T, model.Operation, error) {
	state := P(&row).State()
	op, event, err := model.NewJob(ctx, ids, p, state.CreatedAt, t.Spec(state.ID, route, payload))
	var none T
	if err != nil {
		return none, model.Operation{}, err
	}
	state.OperationID = op.ID
	if err := t.create(ctx, tx, row); err != nil {
		return none, model.Operation{}, err
	}
	if err := tx.Operations().Create(ctx, op); err != nil {
		return none, model.Operation{}, err
	}
	if err := tx.Outbox().Append(ctx, event); err != nil {
		return none, model.Operation{}, err
	}
	return row, op, nil
}

// Read reads one task of the caller's workspace; CodeNotFound if it has
// none with that id.
func (r TaskRow[T, S]) Read(ctx context.Context, uow ports.UnitOfWork, p model.Principal, id uuid.UUID) (T, error) {
	var row T
	err := uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		row, err = r.Get(ctx, tx, id)
		return err
	})
	return row, err
}
