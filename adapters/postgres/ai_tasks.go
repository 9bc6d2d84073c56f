package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The AI tasks of one transaction: the ai_tasks table of
// sql/003_task_tables.sql and the billing record of each task. Their row
// models are at the end.

// insertBilling writes the one billing record of a task; a second one
// (a redelivered job) writes nothing and affects no row.
const insertBilling = `
INSERT INTO ai_billing_records (workspace_id, task_id, units, created_at)
VALUES (?, ?, ?, coalesce(?::timestamptz, now()))
ON CONFLICT (workspace_id, task_id) DO NOTHING`

// AITaskRepository implements ports.AITaskRepository.
type AITaskRepository struct{ aiTaskTable }

type aiTaskTable = taskRepo[model.AITask, aiTaskRow, *aiTaskRow]

var _ = ports.Register(kindRepositories, func(t *Tx) ports.AITaskRepository {
	return &AITaskRepository{aiTaskTable{t.db, t.workspace, "AI task"}}
})

func (r *AITaskRepository) Create(ctx context.Context, t model.AITask) error {
	return r.insert(ctx, toAITaskRow(t))
}

var updateAITask = updateTaskRow("ai_tasks", "status = ?", "result = ?", "reason = ?")

func (r *AITaskRepository) Update(ctx context.Context, t model.AITask) error {
	return r.update(ctx, updateAITask,
		string(t.Status), strPtr(t.Result), strPtr(t.Reason), timePtr(t.UpdatedAt), r.workspace, t.ID)
}

func (r *AITaskRepository) Bill(ctx context.Context, b model.BillingRecord) (bool, error) {
	res, err := r.db.ExecContext(ctx, insertBilling, b.WorkspaceID, b.TaskID, b.Units, timePtr(b.CreatedAt))
	if err != nil {
		return false, mapError(err, "billing record")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, mapError(err, "billing record")
	}
	return n == 1, nil
}

func (r *AITaskRepository) BillingRecords(ctx context.Context, taskID uuid.UUID) ([]model.BillingRecord, error) {
	var rows []billingRow
	err := r.db.NewSelect().Model(&rows).Where("workspace_id = ?", r.workspace).Where("task_id = ?", taskID).Scan(ctx)
	if err != nil {
		return nil, mapError(err, "billing record")
	}
	var out []model.BillingRecord
	for i := range rows {
		out = append(out, rows[i].domain())
	}
	return out, nil
}

func (r *AITaskRepository) List(ctx context.Context, q ports.ListQuery) ([]model.AITask, error) {
	return listNewest(ctx, r.db, r.workspace, q, "AI task", plain((*aiTaskRow).domain),
		eq("status", q.Status), eq("product_id", q.ProductID), eq("kind", q.Kind))
}

type aiTaskRow struct {
	bun.BaseModel `bun:"table:ai_tasks"`

	taskState
	ProductID    uuid.UUID `bun:"product_id,type:uuid"`
	Kind         string    `bun:"kind,notnull"`
	Instructions string    `bun:"instructions,notnull"`
	Result       *string   `bun:"result"`
}

func toAITaskRow(a model.AITask) *aiTaskRow {
	return &aiTaskRow{
		taskState: toTaskState(a.TaskState), ProductID: a.ProductID,
		Kind: string(a.Kind), Instructions: a.Instructions, Result: strPtr(a.Result),
	}
}

func (r *aiTaskRow) domain() model.AITask {
	return model.AITask{
		TaskState: r.state(), ProductID: r.ProductID,
		Kind: model.AIKind(r.Kind), Instructions: r.Instructions, Result: strVal(r.Result),
	}
}

type billingRow struct {
	bun.BaseModel `bun:"table:ai_billing_records"`

	WorkspaceID uuid.UUID  `bun:"workspace_id,pk,type:uuid"`
	TaskID      uuid.UUID  `bun:"task_id,pk,type:uuid"`
	Units       int64      `bun:"units,notnull"`
	CreatedAt   *time.Time `bun:"created_at"`
}

func (r *billingRow) domain() model.BillingRecord {
	return model.BillingRecord{WorkspaceID: r.WorkspaceID, TaskID: r.TaskID, Units: r.Units, CreatedAt: timeVal(r.CreatedAt)}
}
