package operations

import (
	"context"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Page sizes of List.
const (
	DefaultListLimit = 50
	MaxListLimit     = 200
)

// List returns the caller's workspace's operations matching filter, newest
// first, each with its delivery. A zero Limit means DefaultListLimit; a Limit above MaxListLimit is
// lowered to it. Pass the id of the last operation of a page as Before to
// read the next one.
//
// Errors: CodeValidation for a status that is not pending, running,
// succeeded or failed, or a negative limit.
func (s *Service) List(ctx context.Context, p model.Principal, filter ports.OperationFilter) ([]model.Operation, error) {
	switch filter.Status {
	case "", model.OperationPending, model.OperationRunning, model.OperationSucceeded, model.OperationFailed:
	default:
		return nil, domain.Errorf(domain.CodeValidation, "status must be one of pending, running, succeeded, failed")
	}
	switch {
	case filter.Limit < 0:
		return nil, domain.Errorf(domain.CodeValidation, "limit must not be negative")
	case filter.Limit == 0:
		filter.Limit = DefaultListLimit
	case filter.Limit > MaxListLimit:
		filter.Limit = MaxListLimit
	}
	var ops []model.Operation
	err := s.uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		ops, err = tx.Operations().List(ctx, filter)
		if err != nil {
			return err
		}
		return withDelivery(ctx, tx, ops)
	})
	if err != nil {
		return nil, err
	}
	return ops, nil
}
