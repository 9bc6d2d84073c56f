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
	"github.com/oncehq/once/domain/pagination"
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

func TestListPagesWithDefaultsBoundsAndFilters(t *testing.T) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	p := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	ops := seed(t, uow, p.WorkspaceID, pagination.DefaultLimit+10)
	seed(t, uow, uuid.New(), 3) // another workspace's
	svc := operations.NewService(uow)
	ctx := context.Background()

	page, err := svc.List(ctx, p, ports.ListQuery{})
	require.NoError(t, err)
	require.Len(t, page.Items, pagination.DefaultLimit)
	assert.True(t, page.HasMore)
	assert.Equal(t, ops[len(ops)-1].ID, page.Items[0].ID, "newest first")

	_, err = svc.List(ctx, p, ports.ListQuery{Limit: pagination.MaxLimit + 1})
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "got %v", err)

	page, err = svc.List(ctx, p, ports.ListQuery{Status: string(model.OperationSucceeded), Limit: 5})
	require.NoError(t, err)
	require.Len(t, page.Items, 5)
	for _, op := range page.Items {
		assert.Equal(t, model.OperationSucceeded, op.Status)
		assert.Equal(t, p.WorkspaceID, op.WorkspaceID)
	}

	// Walk every succeeded operation with the cursor: each once, newest
	// first, has_more false on the last page only.
	var walked []uuid.UUID
	q := ports.ListQuery{Status: string(model.OperationSucceeded), Limit: 4}
	for {
		page, err := svc.List(ctx, p, q)
		require.NoError(t, err)
		for _, op := range page.Items {
			walked = append(walked, op.ID)
		}
		if !page.HasMore {
			break
		}
		q.StartingAfter = page.Items[len(page.Items)-1].ID
	}
	var succeeded []uuid.UUID
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].Status == model.OperationSucceeded {
			succeeded = append(succeeded, ops[i].ID)
		}
	}
	assert.Equal(t, succeeded, walked)

	page, err = svc.List(ctx, p, ports.ListQuery{Kind: "catalog.sync"})
	require.NoError(t, err)
	assert.Empty(t, page.Items)
	assert.False(t, page.HasMore)
}

func TestListRefusesBadFilters(t *testing.T) {
	svc := operations.NewService(memory.NewUnitOfWork(memory.NewDB()))
	p := model.Principal{WorkspaceID: uuid.New()}
	_, err := svc.List(context.Background(), p, ports.ListQuery{Status: "done"})
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "got %v", err)
	_, err = svc.List(context.Background(), p, ports.ListQuery{Limit: -1})
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "got %v", err)
}
