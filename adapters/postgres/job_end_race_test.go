package postgres_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/testkit"
)

// racePayload names the job's operation and task, as every job's does.
type racePayload struct {
	model.JobOperation
	TransferID uuid.UUID `json:"transfer_id"`
}

func (p racePayload) Task() uuid.UUID { return p.TransferID }

// Two deliveries of one job run at once (the relay's and a Dispatcher's,
// say). The first records a success; the second, whose platform answered
// its twin "already in progress", records a failure from a read it made
// before the first committed. The success stands: the second's outcome is
// dropped, task and operation alike.
func TestASecondDeliveryNeverOverwritesARecordedOutcome(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := newUoW(db)
	ctx := context.Background()
	ws := seedWorkspace(t, uow, t0.Add(time.Hour))

	var transfer model.MaterialTransfer
	var op model.Operation
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		row := model.MaterialTransfer{TaskState: model.NewTaskState(newID(t), ws, time.Now())}
		transfer, op, err = materials.Task.Begin(ctx, tx, system.NewIDs(), model.Principal{WorkspaceID: ws, UserID: newID(t)}, row,
			jobs.Route{}, func(jo model.JobOperation) any { return racePayload{JobOperation: jo, TransferID: row.ID} })
		return err
	})

	var logs testkit.LogBuffer
	// The barriers: the second delivery has read task and operation in its
	// End (a plain read, as End makes) before the first records; the first
	// has committed before the second writes its failure.
	var bothCalled sync.WaitGroup
	bothCalled.Add(2)
	secondRead, firstDone := make(chan struct{}), make(chan struct{})
	first := func(ctx context.Context) bool { return ctx.Value(raceRole{}) == "first" }
	task := materials.Task.TaskRow
	save := task.Save
	task.Save = func(ctx context.Context, tx ports.Tx, tr model.MaterialTransfer) error {
		if tr.Status == model.TaskFailed && !first(ctx) {
			close(secondRead)
			<-firstDone
		}
		return save(ctx, tx, tr)
	}
	row := jobs.OnRow[racePayload, model.MaterialTransfer, model.TaskStatus, struct{}, struct{}]{
		Task: task,
		Record: func(ctx context.Context, tx ports.Tx, _ *slog.Logger, tr model.MaterialTransfer, _ struct{}, now time.Time) error {
			tr.Status, tr.UpdatedAt = model.TaskSucceeded, now
			return save(ctx, tx, tr)
		},
	}
	handler := jobs.NewHandler(jobs.Job[racePayload, struct{}, struct{}]{
		Event: model.EventMaterialTransfer, Noun: "transfer", External: "platform", Refused: "the platform refused",
		Begin: row.Begin,
		Call: func(ctx context.Context, _ *slog.Logger, _ jobs.Run[racePayload], _ struct{}) (struct{}, error) {
			bothCalled.Done()
			bothCalled.Wait()
			if first(ctx) {
				<-secondRead
				return struct{}{}, nil
			}
			return struct{}{}, jobs.Fail("the platform says: already in progress")
		},
		End: row.End,
	}, uow, system.NewClock(), slog.New(slog.NewJSONHandler(&logs, nil)))

	msg := testkit.JobMessage(t, uow, ws, op.ID)
	errs := make(chan error, 1)
	go func() { errs <- handler.Handle(context.WithValue(ctx, raceRole{}, "second"), msg) }()
	require.NoError(t, handler.Handle(context.WithValue(ctx, raceRole{}, "first"), msg))
	close(firstDone)
	require.NoError(t, <-errs, "the second delivery's outcome is dropped, not retried")

	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		got, err := tx.Operations().Get(ctx, op.ID)
		require.NoError(t, err)
		require.Equal(t, model.OperationSucceeded, got.Status, "the operation's error: %q", got.Error)
		tr, err := ports.Repository[ports.MaterialTransferRepository](tx).Get(ctx, transfer.ID)
		require.NoError(t, err)
		require.Equal(t, model.TaskSucceeded, tr.Status, "the transfer's reason: %q", tr.Reason)
		return nil
	})
	require.Contains(t, logs.String(), `"msg":"transfer finished by a concurrent delivery, this delivery's outcome dropped"`)
	require.Contains(t, logs.String(), `"dropped_reason":"the platform says: already in progress"`)
}

// raceRole tells the two deliveries apart in the job's steps.
type raceRole struct{}
