package memory

import (
	"context"

	"github.com/oncehq/once/domain/model"
)

func (r publicationRepo) Create(_ context.Context, p model.Publication) error {
	return publicationTable.create(r.t, p, productRef(p.ProductID), storeRef(p.StoreID))
}

func (r publicationRepo) Update(_ context.Context, p model.Publication) error {
	return publicationTable.update(r.t, p.ID, func(cur *model.Publication) {
		cur.Status, cur.ExternalListingID, cur.Reason, cur.UpdatedAt = p.Status, p.ExternalListingID, p.Reason, p.UpdatedAt
	})
}
