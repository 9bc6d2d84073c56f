package ports

import (
	"context"

	"github.com/oncehq/once/domain/model"
)

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
}
