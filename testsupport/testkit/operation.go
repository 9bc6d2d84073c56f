package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Operation writes an operation of workspace in status, of a store
// verification with no job behind it, created by user at `at`.
func Operation(t testing.TB, uow ports.UnitOfWork, workspace, user uuid.UUID, status model.OperationStatus, at time.Time) model.Operation {
	t.Helper()
	op := model.Operation{ID: uuid.New(), WorkspaceID: workspace, Kind: "store.verify", Status: status,
		ResourceType: "store", ResourceID: uuid.New(), CreatedBy: user, CreatedAt: at, UpdatedAt: at}
	if err := uow.Transact(context.Background(), workspace, func(ctx context.Context, tx ports.Tx) error {
		return tx.Operations().Create(ctx, op)
	}); err != nil {
		t.Fatalf("create operation: %v", err)
	}
	return op
}
