package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// syncRepo is the catalog_syncs table in one transaction.
type syncRepo struct{ tableRepo[model.CatalogSync] }

var _ = ports.Register(kindRepositories, func(t *tx) ports.SyncRepository { return syncRepo{syncTable.in(t)} })

// catalogItemKey is the primary key of the catalogue: (workspace, store,
// external id).
type catalogItemKey struct {
	workspace  uuid.UUID
	store      uuid.UUID
	externalID string
}

// catalogItems are the catalog_items table.
var catalogItems = newRows[catalogItemKey, model.CatalogItem]()

// syncTable is the catalog_syncs table. Its live index is the partial unique
// index of PostgreSQL: one pending or running sync per (workspace, store).
var syncTable = taskTable[model.CatalogSync]("catalog sync", "catalog_syncs_pkey",
	&liveIndex[model.CatalogSync]{
		holds: func(s model.CatalogSync) bool { return s.Status.Active() },
		key: func(s model.CatalogSync) uniqueKey {
			return uniqueKey{"catalog_syncs_active_key", s.WorkspaceID.String() + "\x00" + s.StoreID.String()}
		},
		taken: func(s model.CatalogSync) *domain.Error {
			return domain.Errorf(domain.CodeSyncAlreadyActive, "store %s already has an active catalog sync", s.StoreID)
		},
	})

func (r syncRepo) Create(_ context.Context, s model.CatalogSync) error {
	return syncTable.create(r.t, s, storeRef(s.StoreID))
}

func (r syncRepo) Update(_ context.Context, s model.CatalogSync) error {
	return syncTable.update(r.t, s.ID, func(cur *model.CatalogSync) {
		cur.Status, cur.ItemsSynced, cur.Reason, cur.UpdatedAt = s.Status, s.ItemsSynced, s.Reason, s.UpdatedAt
	})
}

func (r syncRepo) UpsertItems(_ context.Context, items []model.CatalogItem) error {
	t := r.t
	return t.inLock(func() error {
		for _, it := range items {
			if err := t.ownWorkspace("catalog item", it.WorkspaceID); err != nil {
				return err
			}
			if _, ok := storeTable.visibleLocked(t, it.StoreID); !ok {
				return missingReference("catalog item", "store", it.StoreID)
			}
		}
		for _, it := range items {
			catalogItems.mine(t)[catalogItemKey{it.WorkspaceID, it.StoreID, it.ExternalID}] = copyCatalogItem(it)
		}
		return nil
	})
}

func (r syncRepo) List(_ context.Context, q ports.ListQuery) ([]model.CatalogSync, error) {
	return syncTable.list(r.t, q, func(s model.CatalogSync, q ports.ListQuery) bool {
		return is(q.Status, string(s.Status)) && is(q.StoreID, s.StoreID)
	})
}

func copyCatalogItem(it model.CatalogItem) model.CatalogItem {
	dbTimes(&it.SyncedAt)
	return it
}
