package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// catalogItemKey is the primary key of the catalogue: (workspace, store,
// external id).
type catalogItemKey struct {
	workspace  uuid.UUID
	store      uuid.UUID
	externalID string
}

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
			t.catalogItems[catalogItemKey{it.WorkspaceID, it.StoreID, it.ExternalID}] = copyCatalogItem(it)
		}
		return nil
	})
}

func (r syncRepo) CountItems(_ context.Context, storeID uuid.UUID) (int, error) {
	t := r.t
	return inLock(t, func() (int, error) {
		n := 0
		for k := range t.db.catalogItems {
			if _, mine := t.catalogItems[k]; !mine && k.workspace == t.workspace && k.store == storeID {
				n++
			}
		}
		for k := range t.catalogItems {
			if k.workspace == t.workspace && k.store == storeID {
				n++
			}
		}
		return n, nil
	})
}
