package publishing

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a first publication as the steps every job shares see it.
var Task = jobs.TaskTable(domain.OperationListingPublish,
	func(ctx context.Context, tx ports.Tx, id uuid.UUID) (domain.Publication, error) {
		return tx.Publications().Get(ctx, id)
	},
	func(ctx context.Context, tx ports.Tx, row domain.Publication) error {
		return tx.Publications().Update(ctx, row)
	},
	func(row *domain.Publication) (*domain.TaskStatus, *string, *time.Time) {
		return &row.Status, &row.Reason, &row.UpdatedAt
	},
	func(row domain.Publication) uuid.UUID { return row.OperationID })
