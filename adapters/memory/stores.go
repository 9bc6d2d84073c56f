package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

type storeRepo struct{ t *tx }

var _ ports.StoreRepository = storeRepo{}

func storeKey(id uuid.UUID) uniqueKey { return uniqueKey{"stores_pkey", id.String()} }

// storeShopKey is the one-store-per-shop rule: (workspace, platform, shop).
func storeShopKey(s domain.Store) uniqueKey {
	return uniqueKey{"stores_shop_key", s.WorkspaceID.String() + "\x00" + s.Platform + "\x00" + s.ExternalShopID}
}

func (r storeRepo) Create(_ context.Context, s domain.Store) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	if err := t.ownWorkspace("store", s.WorkspaceID); err != nil {
		return err
	}
	if t.db.keyTakenLocked(storeShopKey(s)) {
		e := domain.Errorf(domain.CodeStoreExists, "this workspace already connected this %s shop; resource_id names its store", s.Platform)
		if id, ok := t.db.storeHoldingLocked(storeShopKey(s)); ok {
			e.ResourceID = id.String()
		}
		return e
	}
	if !t.db.reserveLocked(t, storeKey(s.ID), storeShopKey(s)) {
		return domain.Errorf(domain.CodeConflict, "store %s already exists", s.ID)
	}
	t.stores[s.ID] = copyStore(s)
	return nil
}

func (r storeRepo) Get(_ context.Context, id uuid.UUID) (domain.Store, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return domain.Store{}, err
	}
	defer t.db.mu.Unlock()
	s, ok := r.visibleLocked(id)
	if !ok {
		return domain.Store{}, storeNotFound(id)
	}
	return copyStore(s), nil
}

func (r storeRepo) Update(_ context.Context, s domain.Store) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	cur, ok := r.visibleLocked(s.ID)
	if !ok {
		return storeNotFound(s.ID)
	}
	cur.Name = s.Name
	cur.Status = s.Status
	cur.CredentialVersion = s.CredentialVersion
	cur.SealedCredentials = s.SealedCredentials
	cur.UpdatedAt = s.UpdatedAt
	t.stores[s.ID] = copyStore(cur)
	return nil
}

// visibleLocked returns the store as this tx sees it: its own write, else
// the committed row, and only if it belongs to the tx's workspace.
func (r storeRepo) visibleLocked(id uuid.UUID) (domain.Store, bool) {
	s, ok := r.t.stores[id]
	if !ok {
		s, ok = r.t.db.stores[id]
	}
	if !ok || s.WorkspaceID != r.t.workspace {
		return domain.Store{}, false
	}
	return s, true
}

func storeNotFound(id uuid.UUID) error {
	return domain.Errorf(domain.CodeNotFound, "store %s not found", id)
}

// storeHoldingLocked finds the store, committed or in an open transaction,
// that holds the shop key k.
func (db *DB) storeHoldingLocked(k uniqueKey) (uuid.UUID, bool) {
	stores := db.stores
	if holder := db.keyHolderLocked(k); holder != nil {
		stores = holder.stores
	}
	for id, s := range stores {
		if storeShopKey(s) == k {
			return id, true
		}
	}
	return uuid.Nil, false
}
