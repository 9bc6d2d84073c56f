package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
)

// publicationTable is the publications table. Its live index is the partial
// unique index of PostgreSQL: one publication per (workspace, product,
// store) that is not failed.
var publicationTable = taskTable[domain.Publication]("publication", "publications_pkey",
	func(r *taskRows) map[uuid.UUID]domain.Publication { return r.publications },
	&liveIndex[domain.Publication]{
		holds: func(p domain.Publication) bool { return p.Status != domain.TaskFailed },
		key: func(p domain.Publication) uniqueKey {
			return uniqueKey{"publications_active_key",
				p.WorkspaceID.String() + "\x00" + p.ProductID.String() + "\x00" + p.StoreID.String()}
		},
		taken: func(p domain.Publication) *domain.Error {
			return domain.Errorf(domain.CodeAlreadyPublished, "product %s is already published to store %s", p.ProductID, p.StoreID)
		},
	})

func (r publicationRepo) Create(_ context.Context, p domain.Publication) error {
	return publicationTable.create(r.t, p, productRef(p.ProductID), storeRef(p.StoreID))
}

func (r publicationRepo) Update(_ context.Context, p domain.Publication) error {
	return publicationTable.update(r.t, p.ID, func(cur *domain.Publication) {
		cur.Status, cur.ExternalListingID, cur.Reason, cur.UpdatedAt = p.Status, p.ExternalListingID, p.Reason, p.UpdatedAt
	})
}
