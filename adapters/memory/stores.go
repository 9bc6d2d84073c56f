package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// storeRepo is the stores table in one transaction.
type storeRepo struct{ tableRepo[model.Store] }

func (t *tx) Stores() ports.StoreRepository { return storeRepo{storeTable.in(t)} }

func storeKey(id uuid.UUID) uniqueKey { return uniqueKey{"stores_pkey", id.String()} }

// storeShopKey is the one-store-per-shop rule: (workspace, platform, shop).
func storeShopKey(s model.Store) uniqueKey {
	return uniqueKey{"stores_shop_key", s.WorkspaceID.String() + "\x00" + s.Platform + "\x00" + s.ExternalShopID}
}

func (r storeRepo) Create(_ context.Context, s model.Store) error {
	t := r.t
	if err := t.lockOwn("store", s.WorkspaceID); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
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
	storeTable.rows.mine(t)[s.ID] = copyStore(s)
	return nil
}

// storeTable is the stores table; its shop key is not a live index (a
// store holds it for good), so Create checks it itself.
var storeTable = table[model.Store]{
	noun: "store", pkey: "stores_pkey", copy: copyStore,
	rows: newRows[uuid.UUID, model.Store](),
	ids:  func(s model.Store) (uuid.UUID, uuid.UUID) { return s.ID, s.WorkspaceID },
}

func (r storeRepo) Update(_ context.Context, s model.Store) error {
	return storeTable.update(r.t, s.ID, func(cur *model.Store) {
		cur.Name, cur.Status, cur.CredentialVersion = s.Name, s.Status, s.CredentialVersion
		cur.SealedCredentials, cur.UpdatedAt = s.SealedCredentials, s.UpdatedAt
	})
}

// storeHoldingLocked finds the store, committed or in an open transaction,
// that holds the shop key k.
func (db *DB) storeHoldingLocked(k uniqueKey) (uuid.UUID, bool) {
	stores := storeTable.rows.in(&db.taskRows)
	if holder := db.keyHolderLocked(k); holder != nil {
		stores = storeTable.rows.in(&holder.taskRows)
	}
	for id, s := range stores {
		if storeShopKey(s) == k {
			return id, true
		}
	}
	return uuid.Nil, false
}

func (r storeRepo) List(_ context.Context, q ports.ListQuery) ([]model.Store, error) {
	return storeTable.list(r.t, q, func(s model.Store, q ports.ListQuery) bool {
		return is(q.Status, string(s.Status)) && is(q.Platform, s.Platform)
	})
}
