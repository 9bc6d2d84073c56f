package postgres_test

import (
	"context"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// A publication names a product, at a revision, and a store.
var _ = registerKindRow("publications", kindRow{
	cols: ", product_id, store_id, product_revision", vals: ", $7, $6, 1",
	seed: func(ctx context.Context, tx ports.Tx, r seedRefs) error {
		return ports.Repository[ports.PublicationRepository](tx).Create(ctx, model.Publication{
			TaskState: r.task(), ProductID: r.product, StoreID: r.store, ProductRevision: 1,
		})
	},
})
