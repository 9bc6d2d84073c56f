// Package catalog holds the full catalog sync of a store: the use case that
// records the sync task with its operation and catalog.sync event (one
// active sync per store, enforced by the database), and the worker that
// reads the store's listings from the platform into our catalogue.
package catalog

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// Task is a catalog sync as the steps every job shares see it.
var Task = jobs.TaskTable[model.CatalogSync](kinds.CatalogSync, ports.Repository[ports.SyncRepository])

// Kind is the catalog sync (names and failure hook), listed with
// its use case and worker handler in app/kind_list.go.
var Kind = Task.Kind()

// Service starts and reads catalog syncs.
type Service struct{ jobs.Starter }

// NewService builds the service.
func NewService(uow ports.UnitOfWork, clock ports.Clock, ids ports.IDGenerator) *Service {
	return &Service{jobs.Starter{UOW: uow, Clock: clock, IDs: ids}}
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
func (s *Service) StartSync(ctx context.Context, tx ports.Tx, p model.Principal, storeID uuid.UUID) (model.CatalogSync, model.Operation, error) {
	store, err := stores.RequireVerified(ctx, tx, storeID)
	if err != nil {
		return model.CatalogSync{}, model.Operation{}, err
	}
	cs := model.CatalogSync{TaskState: s.NewTask(p), StoreID: storeID}
	return Task.Begin(ctx, tx, s.IDs, p, cs, SyncRoute(store),
		func(op model.JobOperation) any { return model.CatalogSyncRun{SyncID: cs.ID, JobOperation: op} })
}

// SyncRoute is where a sync of store goes: its platform and shop, after
// every earlier sync of the store, so two never read its catalog at once.
func SyncRoute(store model.Store) jobs.Route {
	return jobs.StoreRoute(store, "catalog/"+store.ID.String())
}

// Get reads one catalog sync of the caller's workspace.
//
// Errors: CodeNotFound if the workspace has no such sync.
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.CatalogSync, error) {
	return Task.Read(ctx, s.UOW, p, id)
}
