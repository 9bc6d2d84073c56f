package contract

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// testOperationCancel: a cancel is an Update to cancelled, taken by a
// pending operation and, once its cancel was requested (RequestCancel), by
// a running one; a cancelled operation takes nothing else; of a cancel and
// a job's start on one row, the second sees the first.
func testOperationCancel(t *testing.T, h Harness) {
	ws, other := newWorkspace(t, h), newWorkspace(t, h)
	update := func(t *testing.T, op model.Operation) error {
		return transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Operations().Update(ctx, op) })
	}
	request := func(t *testing.T, ws, id uuid.UUID) (model.Operation, error) {
		var op model.Operation
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			var err error
			op, err = tx.Operations().RequestCancel(ctx, id, now())
			return err
		})
		return op, err
	}
	stored := func(t *testing.T, id uuid.UUID) model.Operation {
		return mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.Operation, error) {
			return tx.Operations().Get(ctx, id)
		})
	}
	refused := func(t *testing.T, err error, cause error) {
		t.Helper()
		requireCode(t, err, domain.CodeInvalidState)
		require.ErrorIs(t, err, cause)
	}

	t.Run("a pending operation takes a cancel, and then nothing else, not even a reopen", func(t *testing.T) {
		op := newOperation(ws)
		createOperation(t, h, op)
		cancelled := op
		cancelled.Cancel(now())
		require.NoError(t, update(t, cancelled))
		require.Equal(t, operationTable.stored(cancelled), stored(t, op.ID))
		got := stored(t, op.ID)
		require.True(t, got.Finished())

		for _, change := range []func(*model.Operation){
			func(op *model.Operation) { op.Start(now()) },
			func(op *model.Operation) { op.Succeed(now()) },
			func(op *model.Operation) { op.Reopen(now()) },
			func(op *model.Operation) { op.Cancel(now()) },
		} {
			next := op
			change(&next)
			refused(t, update(t, next), ports.ErrOperationFinished)
		}
		got, err := request(t, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, operationTable.stored(cancelled), got, "a request changes nothing on a cancelled operation")
	})

	t.Run("a running operation takes a cancel only once it was requested, and keeps the first request", func(t *testing.T) {
		op := newOperation(ws)
		op.Start(now())
		createOperation(t, h, op)
		cancelled := op
		cancelled.Cancel(now())
		refused(t, update(t, cancelled), ports.ErrOperationStarted)
		require.Equal(t, model.OperationRunning, stored(t, op.ID).Status)

		first, err := request(t, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, model.OperationRunning, first.Status)
		require.True(t, first.CancelRequested())
		require.Equal(t, first, stored(t, op.ID))
		again, err := request(t, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, first, again)

		stopped := first
		stopped.Cancel(now())
		require.NoError(t, update(t, stopped), "the job stops at the request")
		got := stored(t, op.ID)
		require.Equal(t, model.OperationCancelled, got.Status)
		require.Equal(t, first.CancelRequestedAt, got.CancelRequestedAt, "the request stays on record")
	})

	t.Run("a requested running operation may still end as its job answered", func(t *testing.T) {
		op := newOperation(ws)
		op.Start(now())
		createOperation(t, h, op)
		requested, err := request(t, ws, op.ID)
		require.NoError(t, err)
		done := requested
		done.Succeed(now())
		require.NoError(t, update(t, done))
		require.Equal(t, model.OperationSucceeded, stored(t, op.ID).Status)
	})

	t.Run("a request leaves a pending or finished operation as it is", func(t *testing.T) {
		for _, status := range []model.OperationStatus{model.OperationPending, model.OperationSucceeded, model.OperationFailed} {
			op := newOperation(ws)
			op.Status = status
			createOperation(t, h, op)
			got, err := request(t, ws, op.ID)
			require.NoError(t, err)
			require.Equal(t, operationTable.stored(op), got)
			require.Equal(t, got, stored(t, op.ID))
		}
	})

	t.Run("another workspace's operation, or a missing one, is not found", func(t *testing.T) {
		op := newOperation(other)
		op.Start(now())
		createOperation(t, h, op)
		_, err := request(t, ws, op.ID)
		requireCode(t, err, domain.CodeNotFound)
		_, err = request(t, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		got := mustQuery(t, h, other, func(ctx context.Context, tx ports.Tx) (model.Operation, error) {
			return tx.Operations().Get(ctx, op.ID)
		})
		require.False(t, got.CancelRequested())
	})

	t.Run("of a cancel and a job's start on one pending operation, the second sees the first", func(t *testing.T) {
		op := newOperation(ws)
		createOperation(t, h, op)
		outcomes := [2]model.Operation{op, op}
		outcomes[0].Cancel(now())
		outcomes[1].Start(now())
		results := raceTwo(t, h, ws, func(i int, ctx context.Context, tx ports.Tx) error {
			// Each a plain read first, then the update.
			if _, err := tx.Operations().Get(ctx, op.ID); err != nil {
				return err
			}
			return tx.Operations().Update(ctx, outcomes[i])
		})
		switch got := stored(t, op.ID); got.Status {
		case model.OperationCancelled: // the cancel first: the start is refused
			require.NoError(t, results[0])
			refused(t, results[1], ports.ErrOperationFinished)
		case model.OperationRunning: // the start first: the cancel is refused
			require.NoError(t, results[1])
			refused(t, results[0], ports.ErrOperationStarted)
		default:
			t.Fatalf("operation %s after a cancel and a start", got.Status)
		}
	})
}
