package postgres_test

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// An AI task names its product and its kind; it fills the billing
// records.
var _ = registerKindRow("ai_tasks", kindRow{
	cols: ", product_id, kind", vals: ", $7, 'text'",
	// A billed AI task stays: the retention reads its billing records.
	discoveryTables: []string{"ai_billing_records"},
	ownRetention: func(w retentionWorld, ws uuid.UUID, gone, kept tableRows) func() {
		billed := gone["ai_tasks"][0]
		w.exec(`INSERT INTO ai_billing_records (workspace_id, task_id, units) VALUES ($1, $2, 3)`, ws, billed)
		gone["ai_tasks"] = slices.DeleteFunc(gone["ai_tasks"], func(id uuid.UUID) bool { return id == billed })
		kept["ai_tasks"] = append(kept["ai_tasks"], billed)
		return nil
	},
	seed: func(ctx context.Context, tx ports.Tx, r seedRefs) error {
		aiTasks := ports.Repository[ports.AITaskRepository](tx)
		task := model.AITask{TaskState: r.task(), ProductID: r.product, Kind: model.AIText}
		if err := aiTasks.Create(ctx, task); err != nil {
			return err
		}
		_, err := aiTasks.Bill(ctx, model.BillingRecord{WorkspaceID: r.ws, TaskID: task.ID, Units: 1, CreatedAt: t0})
		return err
	},
})
