// Package operations holds the use cases of user-visible operations.
package operations

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Service reads operations.
type Service struct {
	uow ports.UnitOfWork
}

func NewService(uow ports.UnitOfWork) *Service { return &Service{uow: uow} }

// Get reads one operation of the caller's workspace, with its delivery;
// CodeNotFound otherwise.
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.Operation, error) {
	var op model.Operation
	err := s.uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		op, err = tx.Operations().Get(ctx, id)
		if err != nil {
			return err
		}
		ops := []model.Operation{op}
		err = withDelivery(ctx, tx, ops)
		op = ops[0]
		return err
	})
	return op, err
}

// withDelivery sets the Delivery of each of ops whose event is still kept.
func withDelivery(ctx context.Context, tx ports.Tx, ops []model.Operation) error {
	events, err := tx.Outbox().ForOperations(ctx, ops)
	if err != nil {
		return err
	}
	for i := range ops {
		if e, ok := events[ops[i].ID]; ok {
			ops[i].Delivery = model.DeliveryOf(e)
		}
	}
	return nil
}
