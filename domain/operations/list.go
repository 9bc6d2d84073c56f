package operations

import (
	"context"
	"slices"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/ports"
)

// List returns a page of the caller's workspace's operations matching q
// (status, kind), newest first, each with its delivery, paged as every
// list is (pagination.List: limit, starting_after, has_more).
//
// Errors: CodeValidation for a status that is not one of
// model.OperationStatuses, or a limit out of bounds.
func (s *Service) List(ctx context.Context, p model.Principal, q ports.ListQuery) (pagination.Page[model.Operation], error) {
	if q.Status != "" && !slices.Contains(model.OperationStatuses, model.OperationStatus(q.Status)) {
		return pagination.Page[model.Operation]{}, domain.Errorf(domain.CodeValidation, "status must be one of pending, running, succeeded, failed, cancelled")
	}
	return pagination.List(ctx, pagination.NewService(s.uow), p, q, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Operation, error) {
		return func(ctx context.Context, q ports.ListQuery) ([]model.Operation, error) {
			ops, err := tx.Operations().List(ctx, q)
			if err != nil {
				return nil, err
			}
			return ops, withDelivery(ctx, tx, ops)
		}
	})
}
