package postgres_test

import (
	"context"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// A catalog sync names its store; it fills the store's catalog items.
var _ = registerKindRow("catalog_syncs", kindRow{
	cols: ", store_id", vals: ", $6",
	seed: func(ctx context.Context, tx ports.Tx, r seedRefs) error {
		syncs := ports.Repository[ports.SyncRepository](tx)
		if err := syncs.Create(ctx, model.CatalogSync{TaskState: r.task(), StoreID: r.store}); err != nil {
			return err
		}
		return syncs.UpsertItems(ctx, []model.CatalogItem{{
			WorkspaceID: r.ws, StoreID: r.store, ExternalID: "x1", Title: "t", Currency: "EUR", SyncedAt: t0,
		}})
	},
})
