package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func TestOperation(t *testing.T) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	ws, resource := uuid.New(), uuid.New()
	now := time.Now().UTC().Truncate(time.Microsecond)
	op := model.Operation{ID: uuid.Must(uuid.NewV7()), WorkspaceID: ws, Kind: model.OperationCatalogSync,
		Status: model.OperationPending, ResourceType: "catalog_sync", ResourceID: resource, CreatedBy: uuid.New(), CreatedAt: now, UpdatedAt: now}
	require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Operations().Create(ctx, op)
	}))
	check := func(id uuid.UUID, kind string, res uuid.UUID) error {
		return uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
			got, err := jobs.Operation(ctx, tx, id, kind, res)
			if err == nil {
				assert.Equal(t, op.ID, got.ID)
			}
			return err
		})
	}
	assert.NoError(t, check(op.ID, model.OperationCatalogSync, resource))
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(check(op.ID, model.OperationListingPublish, resource)), "another kind")
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(check(op.ID, model.OperationCatalogSync, uuid.New())), "another resource")
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(check(uuid.New(), model.OperationCatalogSync, resource)))
}
