package memory

import (
	"context"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// publicationRepo is the publications table in one transaction.
type publicationRepo struct{ tableRepo[model.Publication] }

var _ = ports.Register(kindRepositories, func(t *tx) ports.PublicationRepository {
	return publicationRepo{publicationTable.in(t)}
})

// publicationTable is the publications table. Its live index is the partial
// unique index of PostgreSQL: one publication per (workspace, product,
// store) that is not failed.
var publicationTable = taskTable[model.Publication]("publication", "publications_pkey",
	&liveIndex[model.Publication]{
		holds: func(p model.Publication) bool { return p.Status != model.TaskFailed },
		key: func(p model.Publication) uniqueKey {
			return uniqueKey{"publications_active_key",
				p.WorkspaceID.String() + "\x00" + p.ProductID.String() + "\x00" + p.StoreID.String()}
		},
		taken: func(p model.Publication) *domain.Error {
			return domain.Errorf(domain.CodeAlreadyPublished, "product %s is already published to store %s", p.ProductID, p.StoreID)
		},
	})

func (r publicationRepo) Create(_ context.Context, p model.Publication) error {
	return publicationTable.create(r.t, p, productRef(p.ProductID), storeRef(p.StoreID))
}

func (r publicationRepo) Update(_ context.Context, p model.Publication) error {
	return publicationTable.update(r.t, p.ID, func(cur *model.Publication) {
		cur.Status, cur.ExternalListingID, cur.Reason, cur.UpdatedAt = p.Status, p.ExternalListingID, p.Reason, p.UpdatedAt
	})
}

func (r publicationRepo) List(_ context.Context, q ports.ListQuery) ([]model.Publication, error) {
	return publicationTable.list(r.t, q, func(p model.Publication, q ports.ListQuery) bool {
		return is(q.Status, string(p.Status)) && is(q.StoreID, p.StoreID) && is(q.ProductID, p.ProductID)
	})
}
