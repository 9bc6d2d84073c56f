package memory

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// publicationRepo is the publications table in one transaction.
type publicationRepo struct{ tableRepo[model.Publication] }

var _ = ports.Register(kindRepositories, func(t *tx) ports.PublicationRepository {
	return publicationRepo{publicationTable.in(t)}
})

// publicationTable is the publications table: several publications per
// (workspace, product, store), in a line by WaitsBehind.
var publicationTable = taskTable[model.Publication]("publication", "publications_pkey", nil)

// LastInLine holds the line's lock as PostgreSQL's advisory lock does:
// a second transaction waits for the first to end, then sees what it
// committed.
func (r publicationRepo) LastInLine(ctx context.Context, product, store uuid.UUID) (uuid.UUID, error) {
	lock := uniqueKey{"publication_line", r.t.workspace.String() + "\x00" + product.String() + "\x00" + store.String()}
	for {
		if err := r.t.db.waitRowLock(ctx, r.t, lock); err != nil {
			return uuid.Nil, err
		}
		last, err := inLock(r.t, func() (uuid.UUID, error) {
			if !r.t.db.lockRowLocked(r.t, lock) {
				return uuid.Nil, errRowLocked // taken since the wait: wait again
			}
			return lastInLineLocked(r.t, product, store), nil
		})
		if !errors.Is(err, errRowLocked) {
			return last, err
		}
	}
}

// lastInLineLocked is the publication of product to store that t sees and
// no other waits behind; of several (made before the line had links), the
// newest. Call with mu held.
func lastInLineLocked(t *tx, product, store uuid.UUID) uuid.UUID {
	var line []model.Publication
	seen := map[uuid.UUID]bool{}
	mine, committed := publicationTable.rows.mine(t), publicationTable.rows.committed(t)
	for _, rows := range []map[uuid.UUID]model.Publication{mine, committed} {
		for id, p := range rows {
			if !seen[id] && p.WorkspaceID == t.workspace && p.ProductID == product && p.StoreID == store {
				seen[id] = true
				line = append(line, p)
			}
		}
	}
	behind := map[uuid.UUID]bool{}
	for _, p := range line {
		behind[p.WaitsBehind] = true
	}
	var last model.Publication
	for _, p := range line {
		newer := p.CreatedAt.After(last.CreatedAt) || (p.CreatedAt.Equal(last.CreatedAt) && p.ID.String() > last.ID.String())
		if !behind[p.ID] && (last.ID == uuid.Nil || newer) {
			last = p
		}
	}
	return last.ID
}

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
