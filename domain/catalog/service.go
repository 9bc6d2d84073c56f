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
	op, err := Task.Begin(ctx, tx, s.ids, p, now, &cs, cs.ID, &cs.OperationID, "catalog_sync", domain.EventCatalogSync,
		func(opID uuid.UUID) any { return domain.CatalogSyncRun{SyncID: cs.ID, OperationID: opID} }, tx.Syncs().Create)
	if err != nil {
		return domain.CatalogSync{}, domain.Operation{}, err
	}
	return cs, op, nil
}

// Get reads one catalog sync of the caller's workspace.
//
// Errors: CodeNotFound if the workspace has no such sync.
func (s *Service) Get(ctx context.Context, p domain.Principal, id uuid.UUID) (domain.CatalogSync, error) {
	return Task.Read(ctx, s.uow, p, id)
}
