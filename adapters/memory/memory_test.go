package memory_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Behaviour the ports leave open, pinned for the memory adapter.

func TestTxIsUnusableAfterFnReturns(t *testing.T) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	ws := uuid.New()
	var leaked ports.Tx
	require.NoError(t, uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
		leaked = tx
		return nil
	}))
	_, err := leaked.Stores().Get(t.Context(), uuid.New())
	require.Equal(t, domain.CodeInternal, domain.ErrorCode(err))
}

func TestPanicIsRethrownAfterRollback(t *testing.T) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	ws := uuid.New()
	require.PanicsWithValue(t, "boom", func() {
		_ = uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
			require.NoError(t, tx.Workspaces().Create(ctx, model.Workspace{ID: ws, Name: "w"}))
			panic("boom")
		})
	})
	err := uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
		_, err := tx.Workspaces().Get(ctx, ws)
		return err
	})
	require.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))
}

func TestTransactWithoutWorkspaceIsRefused(t *testing.T) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	called := false
	err := uow.Transact(t.Context(), uuid.Nil, func(ctx context.Context, tx ports.Tx) error {
		called = true
		return nil
	})
	require.Equal(t, domain.CodeValidation, domain.ErrorCode(err))
	require.False(t, called)
}

func TestSignalCoalescesAndNeverBlocks(t *testing.T) {
	s := memory.NewSignal()
	for range 100 {
		s.Committed()
	}
	select {
	case <-s.Wake():
	default:
		t.Fatal("Committed did not wake")
	}
	select {
	case <-s.Wake():
		t.Fatal("100 commits should coalesce into one wake-up")
	default:
	}
}
