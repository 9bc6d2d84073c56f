package catalog_test

import (
	"context"
	"reflect"
	"sync"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// catalogue is the catalogue as the tests see it: the listings committed
// upserts wrote, by store and external id. The repository port has no
// read of the catalogue (the product never reads it back); that each
// adapter keeps one row per listing is the contract suite's to check.
type catalogue struct {
	mu       sync.Mutex
	listings map[uuid.UUID]map[string]bool
}

// count is the number of listings of store.
func (c *catalogue) count(store uuid.UUID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.listings[store])
}

// recordingUoW records in its catalogue the items a transaction upserted,
// once the transaction committed.
type recordingUoW struct {
	ports.UnitOfWork
	catalogue *catalogue
}

func (u recordingUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	var staged []model.CatalogItem
	err := u.UnitOfWork.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		return fn(ctx, recordingTx{tx, &staged})
	})
	if err != nil {
		return err
	}
	u.catalogue.mu.Lock()
	defer u.catalogue.mu.Unlock()
	for _, it := range staged {
		if u.catalogue.listings[it.StoreID] == nil {
			u.catalogue.listings[it.StoreID] = map[string]bool{}
		}
		u.catalogue.listings[it.StoreID][it.ExternalID] = true
	}
	return nil
}

type recordingTx struct {
	ports.Tx
	staged *[]model.CatalogItem
}

func (t recordingTx) KindRepository(port reflect.Type) any {
	repo := t.Tx.KindRepository(port)
	if syncs, ok := repo.(ports.SyncRepository); ok {
		return recordingSyncs{syncs, t.staged}
	}
	return repo
}

type recordingSyncs struct {
	ports.SyncRepository
	staged *[]model.CatalogItem
}

func (r recordingSyncs) UpsertItems(ctx context.Context, items []model.CatalogItem) error {
	if err := r.SyncRepository.UpsertItems(ctx, items); err != nil {
		return err
	}
	*r.staged = append(*r.staged, items...)
	return nil
}
