package ai

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is an AI task as the steps every job shares see it.
var Task = jobs.TaskTable(domain.OperationAITask,
	func(ctx context.Context, tx ports.Tx, id uuid.UUID) (domain.AITask, error) {
		return tx.AITasks().Get(ctx, id)
	},
	func(ctx context.Context, tx ports.Tx, row domain.AITask) error { return tx.AITasks().Update(ctx, row) },
	func(row *domain.AITask) (*domain.TaskStatus, *string, *time.Time) {
		return &row.Status, &row.Reason, &row.UpdatedAt
	},
	func(row domain.AITask) uuid.UUID { return row.OperationID })
