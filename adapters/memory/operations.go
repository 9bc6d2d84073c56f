package memory

import (
	"context"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func (r operationRepo) Update(_ context.Context, op model.Operation) error {
	return operationTable.update(r.t, op.ID, func(cur *model.Operation) {
		cur.Status, cur.Error, cur.UpdatedAt = op.Status, op.Error, op.UpdatedAt
	})
}

// List pages as every list does (listNewest).
func (r operationRepo) List(_ context.Context, q ports.ListQuery) ([]model.Operation, error) {
	return operationTable.list(r.t, q, func(op model.Operation, q ports.ListQuery) bool {
		return is(model.OperationStatus(q.Status), op.Status) && is(q.Kind, op.Kind)
	})
}
