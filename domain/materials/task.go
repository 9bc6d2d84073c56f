package materials

import (
	"context"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is a material transfer as the steps every job shares see it.
var Task = jobs.TaskTable[model.MaterialTransfer](model.OperationMaterialTransfer, "material_transfer",
	model.EventMaterialTransfer, func(tx ports.Tx) transfers { return transfers{tx.MaterialTransfers()} })

// transfers saves a transfer's status, reason and updated_at (its items
// are recorded one by one, by MarkItemDone).
type transfers struct {
	ports.MaterialTransferRepository
}

func (r transfers) Update(ctx context.Context, t model.MaterialTransfer) error {
	return r.UpdateStatus(ctx, t)
}
