package memory

import (
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// transferItemKey is the primary key of an item, (transfer, index). Items
// are rows of their own, as in PostgreSQL, so marking one item done does not
// rewrite the transfer or the other items.
type transferItemKey struct {
	transfer uuid.UUID
	index    int
}

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
	t.transfers[tr.ID] = row
	for _, it := range tr.Items {
		t.transferItems[transferItemKey{tr.ID, it.Index}] = it
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
		for k, it := range t.db.transferItems {
			if k.transfer == id {
				items[k.index] = it
			}
		}
		for k, it := range t.transferItems {
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
		it, ok := t.transferItems[k]
		if !ok {
			it, ok = t.db.transferItems[k]
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
		t.transferItems[k] = it
		return nil
	})
}

func itemNotFound(id uuid.UUID, index int) error {
	return domain.Errorf(domain.CodeNotFound, "material transfer %s has no item %d", id, index)
}
