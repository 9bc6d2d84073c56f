// Package catalog holds the full catalog sync of a store: the use case that
// records the sync task with its operation and catalog.sync event (one
// active sync per store, enforced by the database), and the worker that
// reads the store's listings from the platform into our catalogue.
package catalog

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// Service starts and reads catalog syncs.
type Service struct {
	uow   ports.UnitOfWork
	clock ports.Clock
	ids   ports.IDGenerator
}

// NewService builds the service.
func NewService(uow ports.UnitOfWork, clock ports.Clock, ids ports.IDGenerator) *Service {
	return &Service{uow: uow, clock: clock, ids: ids}
}

// StartSync writes, in tx, a pending catalog sync of the store, the
// catalog.sync operation that tracks it and the catalog.sync event that
// starts the worker. It runs inside the caller's transaction so the
// idempotency record commits with it.
//
// Errors: CodeNotFound if the workspace has no such store, CodeInvalidState
// if the store's credentials are not verified ("verify the store first"),
// CodeSyncAlreadyActive with ResourceID = the active sync if the store has
// a pending or running sync (enforced by the database, so concurrent
// requests cannot both win).
func (s *Service) StartSync(ctx context.Context, tx ports.Tx, p domain.Principal, storeID uuid.UUID) (domain.CatalogSync, domain.Operation, error) {
	if _, err := stores.RequireVerified(ctx, tx, storeID); err != nil {
		return domain.CatalogSync{}, domain.Operation{}, err
	}
	now := s.clock.Now()
	cs := domain.CatalogSync{
		ID:          s.ids.NewID(),
		WorkspaceID: p.WorkspaceID,
		StoreID:     storeID,
		Status:      domain.TaskPending,
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	op, event, err := domain.NewJob(ctx, s.ids, p, now, domain.JobSpec{
		OperationKind: domain.OperationCatalogSync,
		ResourceType:  "catalog_sync",
		ResourceID:    cs.ID,
		EventType:     domain.EventCatalogSync,
		Payload: func(opID uuid.UUID) any {
			return domain.CatalogSyncRun{SyncID: cs.ID, OperationID: opID}
		},
	})
	if err != nil {
		return domain.CatalogSync{}, domain.Operation{}, err
	}
	cs.OperationID = op.ID

	// The sync first: a second active sync fails before anything else is
	// written (the caller rolls back either way).
	if err := tx.Syncs().Create(ctx, cs); err != nil {
		return domain.CatalogSync{}, domain.Operation{}, err
	}
	if err := tx.Operations().Create(ctx, op); err != nil {
		return domain.CatalogSync{}, domain.Operation{}, err
	}
	if err := tx.Outbox().Append(ctx, event); err != nil {
		return domain.CatalogSync{}, domain.Operation{}, err
	}
	return cs, op, nil
}

// Get reads one catalog sync of the caller's workspace.
//
// Errors: CodeNotFound if the workspace has no such sync.
func (s *Service) Get(ctx context.Context, p domain.Principal, id uuid.UUID) (domain.CatalogSync, error) {
	var cs domain.CatalogSync
	err := s.uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		cs, err = tx.Syncs().Get(ctx, id)
		return err
	})
	return cs, err
}
