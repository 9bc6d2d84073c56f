package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// operationTable is the operations table.
var operationTable = table[model.Operation]{
	noun: "operation", pkey: "operations_pkey", copy: copyOperation,
	rows: func(r *taskRows) map[uuid.UUID]model.Operation { return r.operations },
	ids:  func(op model.Operation) (uuid.UUID, uuid.UUID) { return op.ID, op.WorkspaceID },
}

func (r operationRepo) Update(_ context.Context, op model.Operation) error {
	return operationTable.update(r.t, op.ID, func(cur *model.Operation) {
		cur.Status, cur.Error, cur.UpdatedAt = op.Status, op.Error, op.UpdatedAt
	})
}

// List pages as every list does (listNewest), its cursor Before.
func (r operationRepo) List(_ context.Context, f ports.OperationFilter) ([]model.Operation, error) {
	return operationTable.list(r.t, ports.ListQuery{StartingAfter: f.Before, Limit: f.Limit},
		func(op model.Operation, _ ports.ListQuery) bool {
			return is(f.Status, op.Status) && is(f.Kind, op.Kind)
		})
}
