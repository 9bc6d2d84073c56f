package materials

import (
	"context"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a material transfer as the steps every job shares see it.
var Task = jobs.TaskTable[domain.MaterialTransfer](domain.OperationMaterialTransfer, "material_transfer",
	domain.EventMaterialTransfer, func(tx ports.Tx) transfers { return transfers{tx.MaterialTransfers()} })

// transfers saves a transfer's status, reason and updated_at (its items
// are recorded one by one, by MarkItemDone).
type transfers struct {
	ports.MaterialTransferRepository
}

func (r transfers) Update(ctx context.Context, t domain.MaterialTransfer) error {
	return r.UpdateStatus(ctx, t)
}
