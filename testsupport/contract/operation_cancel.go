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

// testOperationCancel: a user's cancel (OperationRepository.Cancel) ends a
// pending operation, only marks a running one, leaves a finished one as it
// is, and is ordered against a job's start on the same row.
func testOperationCancel(t *testing.T, h Harness) {
	ws, other := newWorkspace(t, h), newWorkspace(t, h)
	cancel := func(t *testing.T, ws, id uuid.UUID) (model.Operation, error) {
		var op model.Operation
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			var err error
			op, err = tx.Operations().Cancel(ctx, id, now())
			return err
		})
		return op, err
	}
	stored := func(t *testing.T, id uuid.UUID) model.Operation {
		return mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.Operation, error) { return tx.Operations().Get(ctx, id) })
	}

	t.Run("a pending operation is cancelled, and a second cancel answers the same", func(t *testing.T) {
		op := newOperation(ws)
		createOperation(t, h, op)
		got, err := cancel(t, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, model.OperationCancelled, got.Status)
		require.True(t, got.Finished())
		require.False(t, got.CancelRequested(), "nothing ran, nothing to stop")
		require.Equal(t, got, stored(t, op.ID))

		again, err := cancel(t, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, got, again)
	})

	t.Run("a running operation keeps running with the time of the first request", func(t *testing.T) {
		op := newOperation(ws)
		op.Start(now())
		createOperation(t, h, op)
		first, err := cancel(t, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, model.OperationRunning, first.Status)
		require.True(t, first.CancelRequested())
		again, err := cancel(t, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, first, again)
		require.Equal(t, first, stored(t, op.ID))

		// The job may still end it as the external system answered.
		done := first
		done.Succeed(now())
		require.NoError(t, transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Operations().Update(ctx, done) }))
		got := stored(t, op.ID)
		require.Equal(t, model.OperationSucceeded, got.Status)
		require.Equal(t, first.CancelRequestedAt, got.CancelRequestedAt, "the request stays on record")
	})

	t.Run("a finished operation is left as it is", func(t *testing.T) {
		for _, end := range []func(*model.Operation){
			func(op *model.Operation) { op.Succeed(now()) },
			func(op *model.Operation) { op.Fail("the platform refused", now()) },
		} {
			op := newOperation(ws)
			end(&op)
			createOperation(t, h, op)
			got, err := cancel(t, ws, op.ID)
			require.NoError(t, err)
			require.Equal(t, operationTable.stored(op), got)
			require.Equal(t, got, stored(t, op.ID))
		}
	})

	t.Run("a cancelled operation takes no other outcome, not even a reopen", func(t *testing.T) {
		op := newOperation(ws)
		createOperation(t, h, op)
		_, err := cancel(t, ws, op.ID)
		require.NoError(t, err)
		for _, change := range []func(*model.Operation){
			func(op *model.Operation) { op.Start(now()) },
			func(op *model.Operation) { op.Succeed(now()) },
			func(op *model.Operation) { op.Reopen(now()) },
		} {
			next := op
			change(&next)
			err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Operations().Update(ctx, next) })
			requireCode(t, err, domain.CodeInvalidState)
			require.ErrorIs(t, err, ports.ErrOperationFinished)
		}
		require.Equal(t, model.OperationCancelled, stored(t, op.ID).Status)
	})

	t.Run("another workspace's operation, or a missing one, is not found", func(t *testing.T) {
		op := newOperation(other)
		createOperation(t, h, op)
		_, err := cancel(t, ws, op.ID)
		requireCode(t, err, domain.CodeNotFound)
		_, err = cancel(t, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		got := mustQuery(t, h, other, func(ctx context.Context, tx ports.Tx) (model.Operation, error) {
			return tx.Operations().Get(ctx, op.ID)
		})
		require.Equal(t, model.OperationPending, got.Status)
	})

	t.Run("of a cancel and a job's start on one pending operation, the second sees the first", func(t *testing.T) {
		op := newOperation(ws)
		createOperation(t, h, op)
		started := op
		started.Start(now())
		var afterCancel model.Operation
		results := raceTwo(t, h, ws, func(i int, ctx context.Context, tx ports.Tx) error {
			if i == 0 {
				var err error
				afterCancel, err = tx.Operations().Cancel(ctx, op.ID, now())
				return err
			}
			// The job's start: a plain read, then the update.
			if _, err := tx.Operations().Get(ctx, op.ID); err != nil {
				return err
			}
			return tx.Operations().Update(ctx, started)
		})
		got := stored(t, op.ID)
		switch got.Status {
		case model.OperationCancelled: // the cancel first: the start is refused
			require.NoError(t, results[0])
			require.ErrorIs(t, results[1], ports.ErrOperationFinished)
		case model.OperationRunning: // the start first: the cancel only asks
			require.NoError(t, results[0])
			require.NoError(t, results[1])
			require.True(t, got.CancelRequested())
			require.Equal(t, got, afterCancel)
		default:
			t.Fatalf("operation %s after a cancel and a start", got.Status)
		}
	})
}
