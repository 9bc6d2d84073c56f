package operations_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operations"
	"github.com/oncehq/once/ports"
)

// seed writes n operations, alternating pending and succeeded, and returns
// them oldest first.
func seed(t *testing.T, uow ports.UnitOfWork, ws uuid.UUID, n int) []model.Operation {
	t.Helper()
	ids, clock := system.NewIDs(), system.NewClock()
	ops := make([]model.Operation, n)
	require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		for i := range ops {
			status := model.OperationPending
			if i%2 == 1 {
				status = model.OperationSucceeded
			}
			ops[i] = model.Operation{
				ID: ids.NewID(), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: status,
				ResourceType: "store", ResourceID: uuid.New(), CreatedAt: clock.Now(), UpdatedAt: clock.Now(),
			}
			if err := tx.Operations().Create(ctx, ops[i]); err != nil {
				return err
			}
		}
		return nil
	}))
	return ops
}

func TestListDefaultsCapsAndFilters(t *testing.T) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	p := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	ops := seed(t, uow, p.WorkspaceID, operations.MaxListLimit+10)
	seed(t, uow, uuid.New(), 3) // another workspace's
	svc := operations.NewService(uow)
	ctx := context.Background()

	got, err := svc.List(ctx, p, ports.OperationFilter{})
	require.NoError(t, err)
	require.Len(t, got, operations.DefaultListLimit)
	assert.Equal(t, ops[len(ops)-1].ID, got[0].ID, "newest first")

	got, err = svc.List(ctx, p, ports.OperationFilter{Limit: 1000})
	require.NoError(t, err)
	assert.Len(t, got, operations.MaxListLimit)

	got, err = svc.List(ctx, p, ports.OperationFilter{Status: model.OperationSucceeded, Limit: 5})
	require.NoError(t, err)
	require.Len(t, got, 5)
	for _, op := range got {
		assert.Equal(t, model.OperationSucceeded, op.Status)
		assert.Equal(t, p.WorkspaceID, op.WorkspaceID)
	}

	next, err := svc.List(ctx, p, ports.OperationFilter{Before: got[4].ID, Limit: 5, Status: model.OperationSucceeded})
	require.NoError(t, err)
	require.Len(t, next, 5)
	assert.Less(t, next[0].ID.String(), got[4].ID.String(), "the next page continues after the cursor")

	got, err = svc.List(ctx, p, ports.OperationFilter{Kind: "catalog.sync"})
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestListRefusesBadFilters(t *testing.T) {
	svc := operations.NewService(memory.NewUnitOfWork(memory.NewDB()))
	p := model.Principal{WorkspaceID: uuid.New()}
	_, err := svc.List(context.Background(), p, ports.OperationFilter{Status: "done"})
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "got %v", err)
	_, err = svc.List(context.Background(), p, ports.OperationFilter{Limit: -1})
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "got %v", err)
}
