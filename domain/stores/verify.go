package stores

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Verify writes, in tx, a new store.verify operation and a
// store.credentials.verify event for the store's current credential
// version: a user asking to check the credentials again (say after
// installing the app on the shop). The store's status is left as it is
// until the worker records the verdict, so a verified store stays usable
// while it is checked again. A new request (a new Idempotency-Key) is a
// new platform request token, so it is a new verification, not a replay of
// an earlier one (domain/model/request_token.go).
//
// Errors: CodeNotFound if the workspace has no such store.
func (s *Service) Verify(ctx context.Context, tx ports.Tx, p model.Principal, storeID uuid.UUID) (model.Operation, error) {
	store, err := tx.Stores().Get(ctx, storeID)
	if err != nil {
		return model.Operation{}, err
	}
	op, event, err := s.verifyJob(ctx, p, store, s.Clock.Now())
	if err != nil {
		return model.Operation{}, err
	}
	if err := writeVerifyJob(ctx, tx, op, event); err != nil {
		return model.Operation{}, err
	}
	return op, nil
}
