package catalog

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a catalog sync as the steps every job shares see it.
var Task = jobs.TaskTable(domain.OperationCatalogSync,
	func(ctx context.Context, tx ports.Tx, id uuid.UUID) (domain.CatalogSync, error) {
		return tx.Syncs().Get(ctx, id)
	},
	func(ctx context.Context, tx ports.Tx, row domain.CatalogSync) error {
		return tx.Syncs().Update(ctx, row)
	},
	func(row *domain.CatalogSync) (*domain.TaskStatus, *string, *time.Time) {
		return &row.Status, &row.Reason, &row.UpdatedAt
	},
	func(row domain.CatalogSync) uuid.UUID { return row.OperationID })
