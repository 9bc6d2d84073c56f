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

// List pages as every list does (listNewest), its cursor Before.
func (r operationRepo) List(_ context.Context, f ports.OperationFilter) ([]model.Operation, error) {
	return operationTable.list(r.t, ports.ListQuery{StartingAfter: f.Before, Limit: f.Limit},
		func(op model.Operation, _ ports.ListQuery) bool {
			return is(f.Status, op.Status) && is(f.Kind, op.Kind)
		})
}
