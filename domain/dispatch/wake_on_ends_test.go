package dispatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// An operation's end wakes the Dispatchers once it has committed, so the
// next event of its job's ordering key, which could not be claimed until
// then, goes out at once. An update that ends nothing, a rolled-back end,
// and the end of a job without an ordering key (which frees no follower)
// wake no one.
func TestAnOperationsEndWakesTheDispatchers(t *testing.T) {
	signal := memory.NewSignal()
	uow := dispatch.WakeOnEnds(memory.NewUnitOfWork(memory.NewDB()), signal)
	ws := uuid.New()
	at := time.Now().UTC()
	woken := func() bool {
		select {
		case <-signal.Wake():
			return true
		default:
			return false
		}
	}
	// update writes op, pending, then moves it to status under ctx; fail
	// rolls the move back.
	update := func(ctx context.Context, status model.OperationStatus, fail bool) {
		t.Helper()
		op := model.Operation{ID: uuid.New(), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationPending,
			ResourceType: "store", ResourceID: uuid.New(), CreatedBy: uuid.New(), CreatedAt: at, UpdatedAt: at}
		require.NoError(t, uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Operations().Create(ctx, op)
		}))
		require.False(t, woken(), "woken by a create")
		rolledBack := domain.Errorf(domain.CodeInternal, "rolled back")
		err := uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
			op.Status, op.UpdatedAt = status, at.Add(time.Second)
			if err := tx.Operations().Update(ctx, op); err != nil {
				return err
			}
			if fail {
				return rolledBack
			}
			return nil
		})
		if fail {
			require.ErrorIs(t, err, rolledBack)
		} else {
			require.NoError(t, err)
		}
	}

	update(t.Context(), model.OperationRunning, false)
	require.False(t, woken(), "woken by a start")
	update(t.Context(), model.OperationSucceeded, true)
	require.False(t, woken(), "woken by an end rolled back")
	update(domain.WithUnorderedJob(t.Context()), model.OperationSucceeded, false)
	require.False(t, woken(), "woken by the end of a job without an ordering key")

	update(t.Context(), model.OperationSucceeded, false)
	require.True(t, woken(), "an end did not wake the Dispatchers")
	update(t.Context(), model.OperationFailed, false)
	require.True(t, woken(), "a failure did not wake the Dispatchers")
}
