package memory_test

import (
	"context"
	"sync"
	"testing"
	"time"

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

// Two transactions that each hold one operation's row lock and then wait
// for the other's: one is refused (CodeUnavailable, as PostgreSQL's
// deadlock detector aborts one) instead of both waiting for ever, and the
// other commits.
func TestCrossedRowLocksAreRefusedNotHung(t *testing.T) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	ws := uuid.New()
	ops := [2]model.Operation{}
	for i := range ops {
		now := time.Now()
		ops[i] = model.Operation{ID: uuid.New(), WorkspaceID: ws, Kind: model.OperationStoreVerify,
			Status: model.OperationPending, ResourceType: "store", ResourceID: uuid.New(),
			CreatedBy: uuid.New(), CreatedAt: now, UpdatedAt: now}
		require.NoError(t, uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Operations().Create(ctx, ops[i])
		}))
	}
	var (
		holding sync.WaitGroup
		errs    [2]error
		wg      sync.WaitGroup
	)
	holding.Add(2)
	for i := range 2 {
		wg.Go(func() {
			errs[i] = uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
				first, second := ops[i], ops[1-i]
				first.Start(time.Now())
				if err := tx.Operations().Update(ctx, first); err != nil {
					holding.Done()
					return err
				}
				holding.Done()
				holding.Wait() // both hold their first row
				second.Start(time.Now())
				return tx.Operations().Update(ctx, second)
			})
		})
	}
	wg.Wait()
	refused := 0
	for _, err := range errs {
		if err != nil {
			require.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err), "%v", err)
			refused++
		}
	}
	require.Equal(t, 1, refused, "one of the two is refused, the other commits")
}
