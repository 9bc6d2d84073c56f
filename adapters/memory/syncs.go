package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

type syncRepo struct{ t *tx }

var _ ports.SyncRepository = syncRepo{}

// catalogItemKey is the primary key of the catalogue: (workspace, store,
// external id).
type catalogItemKey struct {
	workspace  uuid.UUID
	store      uuid.UUID
	externalID string
}

func syncKey(id uuid.UUID) uniqueKey { return uniqueKey{"catalog_syncs_pkey", id.String()} }

// syncActiveKey is the partial unique index of PostgreSQL: one pending or
// running sync per (workspace, store). A sync holds it while active; it is
// reserved when written, so of two concurrent transactions only one can
// create a sync for a store.
func syncActiveKey(s domain.CatalogSync) uniqueKey {
	return uniqueKey{"catalog_syncs_active_key", s.WorkspaceID.String() + "\x00" + s.StoreID.String()}
}

func (r syncRepo) Create(_ context.Context, s domain.CatalogSync) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	if err := t.ownWorkspace("catalog sync", s.WorkspaceID); err != nil {
		return err
	}
	if _, ok := (storeRepo{t}).visibleLocked(s.StoreID); !ok {
		return missingReference("catalog sync", "store", s.StoreID)
	}
	keys := []uniqueKey{syncKey(s.ID)}
	if s.Status.Active() {
		active := syncActiveKey(s)
		if t.db.keyTakenForLocked(t, active) {
			return r.alreadyActiveLocked(s)
		}
		keys = append(keys, active)
	}
	if !t.db.reserveLocked(t, keys...) {
		return domain.Errorf(domain.CodeConflict, "catalog sync %s already exists", s.ID)
	}
	t.syncs[s.ID] = copySync(s)
	return nil
}

func (r syncRepo) Get(_ context.Context, id uuid.UUID) (domain.CatalogSync, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return domain.CatalogSync{}, err
	}
	defer t.db.mu.Unlock()
	s, ok := r.visibleLocked(id)
	if !ok {
		return domain.CatalogSync{}, syncNotFound(id)
	}
	return copySync(s), nil
}

func (r syncRepo) Update(_ context.Context, s domain.CatalogSync) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	cur, ok := r.visibleLocked(s.ID)
	if !ok {
		return syncNotFound(s.ID)
	}
	next := cur
	next.Status = s.Status
	next.ItemsSynced = s.ItemsSynced
	next.Reason = s.Reason
	next.UpdatedAt = s.UpdatedAt
	key := syncActiveKey(cur)
	switch {
	case cur.Status.Active() && !next.Status.Active():
		t.db.releaseLocked(t, key)
	case !cur.Status.Active() && next.Status.Active():
		if !t.db.reserveLocked(t, key) {
			return r.alreadyActiveLocked(next)
		}
	}
	t.syncs[s.ID] = copySync(next)
	return nil
}

func (r syncRepo) UpsertItems(_ context.Context, items []domain.CatalogItem) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	for _, it := range items {
		if err := t.ownWorkspace("catalog item", it.WorkspaceID); err != nil {
			return err
		}
		if _, ok := (storeRepo{t}).visibleLocked(it.StoreID); !ok {
			return missingReference("catalog item", "store", it.StoreID)
		}
	}
	for _, it := range items {
		t.catalogItems[catalogItemKey{it.WorkspaceID, it.StoreID, it.ExternalID}] = copyCatalogItem(it)
	}
	return nil
}

func (r syncRepo) CountItems(_ context.Context, storeID uuid.UUID) (int, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return 0, err
	}
	defer t.db.mu.Unlock()
	n := 0
	for k := range t.db.catalogItems {
		if _, mine := t.catalogItems[k]; !mine && k.workspace == t.workspace && k.store == storeID {
			n++
		}
	}
	for k := range t.catalogItems {
		if k.workspace == t.workspace && k.store == storeID {
			n++
		}
	}
	return n, nil
}

// alreadyActiveLocked is the error for s's store having an active sync,
// naming that sync (committed, ours, or another open transaction's).
func (r syncRepo) alreadyActiveLocked(s domain.CatalogSync) error {
	t := r.t
	key := syncActiveKey(s)
	holds := func(q domain.CatalogSync) bool {
		return q.ID != s.ID && q.Status.Active() && syncActiveKey(q) == key
	}
	var holder uuid.UUID
	if other := t.db.keyHolderLocked(key); other != nil {
		for _, q := range other.syncs {
			if holds(q) {
				holder = q.ID
			}
		}
	}
	if holder == uuid.Nil {
		for _, q := range t.syncs {
			if holds(q) {
				holder = q.ID
			}
		}
	}
	if holder == uuid.Nil {
		for id, q := range t.db.syncs {
			if _, mine := t.syncs[id]; !mine && holds(q) {
				holder = q.ID
			}
		}
	}
	e := domain.Errorf(domain.CodeSyncAlreadyActive, "store %s already has an active catalog sync", s.StoreID)
	if holder != uuid.Nil {
		e.ResourceID = holder.String()
	}
	return e
}

func (r syncRepo) visibleLocked(id uuid.UUID) (domain.CatalogSync, bool) {
	s, ok := r.t.syncs[id]
	if !ok {
		s, ok = r.t.db.syncs[id]
	}
	if !ok || s.WorkspaceID != r.t.workspace {
		return domain.CatalogSync{}, false
	}
	return s, true
}

func syncNotFound(id uuid.UUID) error {
	return domain.Errorf(domain.CodeNotFound, "catalog sync %s not found", id)
}
