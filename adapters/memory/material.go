package memory

import (
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// transferRepo is the material_transfers table in one transaction.
type transferRepo struct {
	tableRepo[model.MaterialTransfer]
}

var _ = ports.Register(kindRepositories, func(t *tx) ports.MaterialTransferRepository {
	return transferRepo{transferTable.in(t)}
})

// transferItemKey is the primary key of an item, (transfer, index). Items
// are rows of their own, as in PostgreSQL, so marking one item done does not
// rewrite the transfer or the other items.
type transferItemKey struct {
	transfer uuid.UUID
	index    int
}

// transferItems are the material_transfer_items table.
var transferItems = newRows[transferItemKey, model.MaterialItem]()

// transferTable is the material_transfers table; its items are rows of
// their own (transferItems), so its rows hold none.
var transferTable = taskTable[model.MaterialTransfer]("material transfer", "material_transfers_pkey", nil)

func (r transferRepo) Create(_ context.Context, tr model.MaterialTransfer) error {
	t := r.t
	if err := t.lockOwn("material transfer", tr.WorkspaceID); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	seen := map[int]bool{}
	for _, it := range tr.Items {
		if seen[it.Index] {
			return domain.Errorf(domain.CodeConflict, "material transfer item %d already exists", it.Index)
		}
		seen[it.Index] = true
	}
	if !t.db.reserveLocked(t, uniqueKey{transferTable.pkey, tr.ID.String()}) {
		return domain.Errorf(domain.CodeConflict, "material transfer %s already exists", tr.ID)
	}
	row := transferTable.copy(tr)
	row.Items = nil
	transferTable.rows.mine(t)[tr.ID] = row
	for _, it := range tr.Items {
		transferItems.mine(t)[transferItemKey{tr.ID, it.Index}] = it
	}
	return nil
}

func (r transferRepo) Get(_ context.Context, id uuid.UUID) (model.MaterialTransfer, error) {
	t := r.t
	return inLock(t, func() (model.MaterialTransfer, error) {
		tr, ok := transferTable.visibleLocked(t, id)
		if !ok {
			return model.MaterialTransfer{}, transferTable.notFound(id)
		}
		tr = transferTable.copy(tr)
		items := map[int]model.MaterialItem{}
		for k, it := range transferItems.committed(t) {
			if k.transfer == id {
				items[k.index] = it
			}
		}
		for k, it := range transferItems.mine(t) {
			if k.transfer == id {
				items[k.index] = it
			}
		}
		for _, it := range items {
			tr.Items = append(tr.Items, it)
		}
		sort.Slice(tr.Items, func(i, j int) bool { return tr.Items[i].Index < tr.Items[j].Index })
		return tr, nil
	})
}

func (r transferRepo) UpdateStatus(_ context.Context, tr model.MaterialTransfer) error {
	return transferTable.update(r.t, tr.ID, func(cur *model.MaterialTransfer) {
		cur.Status, cur.Reason, cur.UpdatedAt = tr.Status, tr.Reason, tr.UpdatedAt
	})
}

func (r transferRepo) MarkItemDone(_ context.Context, id uuid.UUID, index int, objectKey string, size int64) error {
	t := r.t
	return t.inLock(func() error {
		if _, ok := transferTable.visibleLocked(t, id); !ok {
			return itemNotFound(id, index)
		}
		k := transferItemKey{id, index}
		it, ok := transferItems.mine(t)[k]
		if !ok {
			it, ok = transferItems.committed(t)[k]
		}
		if !ok {
			return itemNotFound(id, index)
		}
		if it.Done {
			return nil
		}
		it.Done = true
		it.ObjectKey = objectKey
		it.SizeBytes = size
		transferItems.mine(t)[k] = it
		return nil
	})
}

func itemNotFound(id uuid.UUID, index int) error {
	return domain.Errorf(domain.CodeNotFound, "material transfer %s has no item %d", id, index)
}

// List reads transfers without their items (the rows never hold them).
func (r transferRepo) List(_ context.Context, q ports.ListQuery) ([]model.MaterialTransfer, error) {
	return transferTable.list(r.t, q, func(m model.MaterialTransfer, q ports.ListQuery) bool { return is(q.Status, string(m.Status)) })
}
