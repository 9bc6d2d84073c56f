package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// ProductRepository stores product drafts with optimistic concurrency.
// Create (Resources) writes the Revision as given, normally 1.
type ProductRepository interface {
	Resources[model.Product]
	// Update saves title, description, price, currency, media ids and
	// updated_at of p only if the stored revision equals expectedRevision,
	// and sets the revision to expectedRevision+1 (p.Revision is ignored).
	// Returns the saved product. domain.CodePreconditionFailed if the stored
	// revision differs (nothing changes), domain.CodeNotFound if absent.
	Update(ctx context.Context, p model.Product, expectedRevision int) (model.Product, error)
}

// MediaRepository stores uploaded files' records; Get (Resources) reads
// the media with its variants.
type MediaRepository interface {
	Resources[model.Media]
	// Update replaces status, variants, reason and updated_at,
	// unconditionally; domain.CodeNotFound if absent. A change of status
	// that must happen once (one of several concurrent requests) is a
	// Transition instead.
	Update(ctx context.Context, m model.Media) error
	// Transition sets status to and updated_at at of media id only if the
	// stored status is from: a compare-and-set, so of two concurrent
	// transactions moving the same media out of from exactly one succeeds
	// (the other waits for it where the database locks the row, then sees
	// the new status). domain.CodeInvalidState if the media has another
	// status (nothing changes), domain.CodeNotFound if absent.
	Transition(ctx context.Context, id uuid.UUID, from, to model.MediaStatus, at time.Time) error
}

// MaterialTransferRepository stores transfers and their items. Of
// Resources, Create writes the transfer with its items, Get reads it with
// its items ordered by index, and List loads no items.
type MaterialTransferRepository interface {
	Resources[model.MaterialTransfer]
	// UpdateStatus replaces status, reason and updated_at;
	// domain.CodeNotFound if absent.
	UpdateStatus(ctx context.Context, t model.MaterialTransfer) error
	// MarkItemDone records that item index of transfer id is stored under
	// objectKey; domain.CodeNotFound if there is no such item. Marking a done
	// item again changes nothing.
	MarkItemDone(ctx context.Context, id uuid.UUID, index int, objectKey string, size int64) error
}

// PublicationRepository stores first-publish tasks. Of Resources, Create
// keeps a product at most one publication per store that is not failed:
// otherwise domain.CodeAlreadyPublished with ResourceID = the existing
// publication's id, enforced by the database; domain.CodeConflict if the
// id exists, or if the product or the store is missing or in another
// workspace.
type PublicationRepository interface {
	Resources[model.Publication]
	// Update replaces status, external listing id, reason and updated_at;
	// domain.CodeNotFound if absent. Moving a failed publication out of
	// failed while the product has another publication to the store that
	// is not failed is domain.CodeAlreadyPublished (nothing changes).
	Update(ctx context.Context, p model.Publication) error
}

// SyncRepository stores catalog syncs and the catalogue they fill. Of
// Resources, Create keeps a store at most one pending or running sync:
// otherwise domain.CodeSyncAlreadyActive with ResourceID = the active
// sync's id, enforced by the database (a partial unique index), so
// concurrent requests cannot both win; domain.CodeConflict if the id
// exists, or if the store is missing or in another workspace.
type SyncRepository interface {
	Resources[model.CatalogSync]
	// Update replaces status, items synced, reason and updated_at;
	// domain.CodeNotFound if absent. Moving a finished sync back to pending
	// or running while the store has another active sync is
	// domain.CodeSyncAlreadyActive (nothing changes).
	Update(ctx context.Context, s model.CatalogSync) error
	// UpsertItems stores listings keyed by (store, external id), replacing
	// what an earlier sync stored; re-running a sync changes nothing more.
	// domain.CodeConflict if a store is missing or in another workspace.
	UpsertItems(ctx context.Context, items []model.CatalogItem) error
	// CountItems counts the store's catalogue.
	CountItems(ctx context.Context, storeID uuid.UUID) (int, error)
}

// AITaskRepository stores AI tasks and what they cost. Create
// (Resources) is domain.CodeConflict if the id exists, or if the product
// is missing or in another workspace.
type AITaskRepository interface {
	Resources[model.AITask]
	// Update replaces status, result, reason and updated_at;
	// domain.CodeNotFound if absent.
	Update(ctx context.Context, t model.AITask) error
	// Bill writes the billing record of r.TaskID once: true if written,
	// false if the task was already billed (nothing changes). Enforced by
	// the database (unique per task). domain.CodeConflict if the task is
	// missing or in another workspace.
	Bill(ctx context.Context, r model.BillingRecord) (bool, error)
	// BillingRecords returns the records of one task (at most one).
	BillingRecords(ctx context.Context, taskID uuid.UUID) ([]model.BillingRecord, error)
}
