package memory

import (
	"context"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// productRevisionKey is the right to write revision rev of product id. An
// Update reserves the revision it writes, so of two transactions updating
// from the same revision only one gets it, as PostgreSQL's row lock and
// re-checked "WHERE revision = ?" make it. (PostgreSQL would let the loser
// wait and succeed if the winner rolls back; memory refuses at once.)
func productRevisionKey(id uuid.UUID, rev int) uniqueKey {
	return uniqueKey{"products_revision", id.String() + "\x00" + strconv.Itoa(rev)}
}

func (r productRepo) Update(_ context.Context, p model.Product, expectedRevision int) (model.Product, error) {
	var saved model.Product
	err := productTable.change(r.t, p.ID, func(cur *model.Product) error {
		if cur.Revision != expectedRevision || !r.t.db.reserveLocked(r.t, productRevisionKey(p.ID, expectedRevision+1)) {
			return domain.Errorf(domain.CodePreconditionFailed,
				"product %s changed since revision %d", p.ID, expectedRevision)
		}
		cur.Title, cur.Description, cur.PriceMinor, cur.Currency = p.Title, p.Description, p.PriceMinor, p.Currency
		cur.MediaIDs, cur.UpdatedAt, cur.Revision = p.MediaIDs, p.UpdatedAt, expectedRevision+1
		saved = *cur
		return nil
	})
	if err != nil {
		return model.Product{}, err
	}
	return copyProduct(saved), nil
}

// ForgetMedia changes each product naming one of ids as an Update from
// its current revision would, reserving the revision it writes: a
// product another open transaction is saving fails the whole call (memory
// refuses at once where PostgreSQL would wait), and the caller's next
// pass tries again.
func (r productRepo) ForgetMedia(_ context.Context, ids []uuid.UUID, at time.Time) (int, error) {
	gone := func(id uuid.UUID) bool { return slices.Contains(ids, id) }
	naming, err := productTable.list(r.t, ports.ListQuery{Limit: math.MaxInt}, func(p model.Product, _ ports.ListQuery) bool {
		return slices.ContainsFunc(p.MediaIDs, gone)
	})
	if err != nil {
		return 0, err
	}
	for _, p := range naming {
		err := productTable.change(r.t, p.ID, func(cur *model.Product) error {
			if !r.t.db.reserveLocked(r.t, productRevisionKey(p.ID, cur.Revision+1)) {
				return domain.Errorf(domain.CodePreconditionFailed, "product %s is being saved by a concurrent request", p.ID)
			}
			cur.MediaIDs = slices.DeleteFunc(cur.MediaIDs, gone) // cur is a copy
			cur.UpdatedAt, cur.Revision = at, cur.Revision+1
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return len(naming), nil
}

// missingReference is what a foreign key violation maps to in the
// PostgreSQL adapter.
func missingReference(what, ref string, id uuid.UUID) error {
	return domain.Errorf(domain.CodeConflict, "%s refers to a missing %s %s", what, ref, id)
}
