package stores

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// RequireVerified reads a store that work is about to be started on (a
// publish, a catalog sync) and insists its credentials were verified:
// starting platform work on an unverified authorization would only fail
// later, in a worker, where the user cannot see why.
//
// Errors: CodeNotFound if the workspace has no such store,
// CodeInvalidState if it is not verified (pending or failed).
func RequireVerified(ctx context.Context, tx ports.Tx, storeID uuid.UUID) (model.Store, error) {
	store, err := tx.Stores().Get(ctx, storeID)
	if err != nil {
		return model.Store{}, err
	}
	if store.Status != model.StoreVerified {
		return model.Store{}, &domain.Error{
			Code:       domain.CodeInvalidState,
			Message:    "verify the store first: its credentials are " + string(store.Status),
			ResourceID: store.ID.String(),
		}
	}
	return store, nil
}
