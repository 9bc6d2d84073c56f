package memory

import (
	"context"
	"strconv"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

type productRepo struct{ t *tx }

var _ ports.ProductRepository = productRepo{}

func productKey(id uuid.UUID) uniqueKey { return uniqueKey{"products_pkey", id.String()} }

// productRevisionKey is the right to write revision rev of product id. An
// Update reserves the revision it writes, so of two transactions updating
// from the same revision only one gets it, as PostgreSQL's row lock and
// re-checked "WHERE revision = ?" make it. (PostgreSQL would let the loser
// wait and succeed if the winner rolls back; memory refuses at once.)
func productRevisionKey(id uuid.UUID, rev int) uniqueKey {
	return uniqueKey{"products_revision", id.String() + "\x00" + strconv.Itoa(rev)}
}

func (r productRepo) Create(_ context.Context, p model.Product) error {
	t := r.t
	if err := t.lockOwn("product", p.WorkspaceID); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	if !t.db.reserveLocked(t, productKey(p.ID)) {
		return domain.Errorf(domain.CodeConflict, "product %s already exists", p.ID)
	}
	t.products[p.ID] = copyProduct(p)
	return nil
}

func (r productRepo) Get(_ context.Context, id uuid.UUID) (model.Product, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return model.Product{}, err
	}
	defer t.db.mu.Unlock()
	p, ok := t.productLocked(id)
	if !ok {
		return model.Product{}, productNotFound(id)
	}
	return copyProduct(p), nil
}

func (r productRepo) Update(_ context.Context, p model.Product, expectedRevision int) (model.Product, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return model.Product{}, err
	}
	defer t.db.mu.Unlock()
	cur, ok := t.productLocked(p.ID)
	if !ok {
		return model.Product{}, productNotFound(p.ID)
	}
	if cur.Revision != expectedRevision || !t.db.reserveLocked(t, productRevisionKey(p.ID, expectedRevision+1)) {
		return model.Product{}, domain.Errorf(domain.CodePreconditionFailed,
			"product %s changed since revision %d", p.ID, expectedRevision)
	}
	cur.Title = p.Title
	cur.Description = p.Description
	cur.PriceMinor = p.PriceMinor
	cur.Currency = p.Currency
	cur.MediaIDs = p.MediaIDs
	cur.UpdatedAt = p.UpdatedAt
	cur.Revision = expectedRevision + 1
	cur = copyProduct(cur)
	t.products[p.ID] = cur
	return copyProduct(cur), nil
}

// productLocked returns the product as t sees it: its own write, else the
// committed row, and only if it belongs to t's workspace.
func (t *tx) productLocked(id uuid.UUID) (model.Product, bool) {
	p, ok := t.products[id]
	if !ok {
		p, ok = t.db.products[id]
	}
	if !ok || p.WorkspaceID != t.workspace {
		return model.Product{}, false
	}
	return p, true
}

func productNotFound(id uuid.UUID) error {
	return domain.Errorf(domain.CodeNotFound, "product %s not found", id)
}

// missingReference is what a foreign key violation maps to in the
// PostgreSQL adapter.
func missingReference(what, ref string, id uuid.UUID) error {
	return domain.Errorf(domain.CodeConflict, "%s refers to a missing %s %s", what, ref, id)
}
