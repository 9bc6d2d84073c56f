package materials

import (
	"context"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is a material transfer as the steps every job shares see it.
var Task = jobs.TaskTable[model.MaterialTransfer](jobs.Names{
	EventType: model.EventMaterialTransfer, OperationKind: model.OperationMaterialTransfer, ResourceType: "material_transfer",
}, func(tx ports.Tx) transfers { return transfers{tx.MaterialTransfers()} })

// Kind is the material transfer in the list of task kinds (app/kinds.go).
var Kind = Task.Kind()

// transfers saves a transfer's status, reason and updated_at (its items
// are recorded one by one, by MarkItemDone).
type transfers struct {
	ports.MaterialTransferRepository
}

func (r transfers) Update(ctx context.Context, t model.MaterialTransfer) error {
	return r.UpdateStatus(ctx, t)
}
