package ports

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// AITaskRepository stores AI tasks and what they cost. Create
// (Resources) is domain.CodeConflict if the id exists, or if the product
// is missing or in another workspace.
type AITaskRepository interface {
	Resources[model.AITask]
	// Update replaces status, result, reason and updated_at;
	// domain.CodeNotFound if absent.
	Update(ctx context.Context, t model.AITask) error
	// Bill writes the billing record of r.TaskID once: true if written,
	// false if the task was already billed (nothing changes). Enforced by
	// the database (unique per task). domain.CodeConflict if the task is
	// missing or in another workspace.
	Bill(ctx context.Context, r model.BillingRecord) (bool, error)
	// BillingRecords returns the records of one task (at most one).
	BillingRecords(ctx context.Context, taskID uuid.UUID) ([]model.BillingRecord, error)
}
