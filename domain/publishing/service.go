// Package publishing holds the publishes of a product to a store: the use
// case that records a publication task with its operation and
// listing.publish event, and the worker that puts the product's listing on
// the platform (the first publication creates it, a later one replaces its
// content) with the publication's request token, so the platform never
// holds two listings for one product.
package publishing

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// Task is a first publication as the steps every job shares see it.
var Task = jobs.TaskTable[model.Publication](kinds.ListingPublish, ports.Repository[ports.PublicationRepository])

// Kind is the listing publication (names and failure hook), listed with
// its use case and worker handler in app/kind_list.go.
var Kind = Task.Kind()

// Service starts and reads publications.
type Service struct{ jobs.Starter }

// NewService builds the service.
func NewService(uow ports.UnitOfWork, clock ports.Clock, ids ports.IDGenerator) *Service {
	return &Service{jobs.Starter{UOW: uow, Clock: clock, IDs: ids}}
}

// Publish writes, in tx, a pending publication of the product's current
// revision to the store, the listing.publish operation that tracks it and
// the listing.publish event that starts the worker. It runs inside the
// caller's transaction so the idempotency record commits with it.
//
// A product may be published to a store again while an earlier
// publication of it there is live: the new one names the last one in
// WaitsBehind and its job starts only once that one ended (PublishRoute),
// so publications land on the platform in the order they were committed.
//
// Errors: CodeNotFound if the workspace has no such product or store,
// CodeInvalidState if the store's credentials are not verified ("verify the
// store first").
func (s *Service) Publish(ctx context.Context, tx ports.Tx, p model.Principal, productID, storeID uuid.UUID) (model.Publication, model.Operation, error) {
	product, err := tx.Products().Get(ctx, productID)
	if err != nil {
		return model.Publication{}, model.Operation{}, err
	}
	store, err := stores.RequireVerified(ctx, tx, storeID)
	if err != nil {
		return model.Publication{}, model.Operation{}, err
	}
	// Held until the transaction ends, so a concurrent publish of the
	// product to the store names this one, not the same one as this.
	behind, err := ports.Repository[ports.PublicationRepository](tx).LastInLine(ctx, product.ID, storeID)
	if err != nil {
		return model.Publication{}, model.Operation{}, err
	}
	pub := model.Publication{TaskState: s.NewTask(p), ProductID: product.ID, StoreID: storeID,
		ProductRevision: product.Revision, WaitsBehind: behind}
	return Task.Begin(ctx, tx, s.IDs, p, pub, PublishRoute(store, product.ID), func(op model.JobOperation) any {
		return model.ListingPublish{PublicationID: pub.ID, ProductRevision: pub.ProductRevision, JobOperation: op}
	})
}

// PublishRoute is where a publication of product to store goes: the
// store's platform and shop, after every earlier publication of the
// product to the store, so a later revision never lands before an earlier.
func PublishRoute(store model.Store, product uuid.UUID) jobs.Route {
	return jobs.StoreRoute(store, "publish/"+product.String()+"/"+store.ID.String())
}

// Get reads one publication of the caller's workspace.
//
// Errors: CodeNotFound if the workspace has no such publication.
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.Publication, error) {
	return Task.Read(ctx, s.UOW, p, id)
}
