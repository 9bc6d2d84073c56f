package materials

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a material transfer as the steps every job shares see it.
var Task = jobs.TaskTable(domain.OperationMaterialTransfer,
	func(ctx context.Context, tx ports.Tx, id uuid.UUID) (domain.MaterialTransfer, error) {
		return tx.MaterialTransfers().Get(ctx, id)
	},
	func(ctx context.Context, tx ports.Tx, row domain.MaterialTransfer) error {
		return tx.MaterialTransfers().UpdateStatus(ctx, row)
	},
	func(row *domain.MaterialTransfer) (*domain.TaskStatus, *string, *time.Time) {
		return &row.Status, &row.Reason, &row.UpdatedAt
	},
	func(row domain.MaterialTransfer) uuid.UUID { return row.OperationID })
