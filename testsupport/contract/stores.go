package contract

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// storeTable is the stores table to the table contract (tables.go).
var storeTable = table[model.Store]{
	repo: func(tx ports.Tx) tableRepo[model.Store] { return tx.Stores() },
	keys: func(s *model.Store) (*uuid.UUID, *uuid.UUID) { return &s.ID, &s.WorkspaceID },
	row:  func(_ *testing.T, _ Harness, ws uuid.UUID) model.Store { return newStore(ws) },
	stored: func(s model.Store) model.Store {
		s.SealedCredentials = bytes.Clone(s.SealedCredentials)
		s.CreatedAt, s.UpdatedAt = dbTime(s.CreatedAt), dbTime(s.UpdatedAt)
		return s
	},
	scramble: func(s *model.Store) { s.SealedCredentials[0] ^= 0xff },
	updates:  "replaces the mutable fields only",
	mutable: func(s *model.Store) {
		s.Name, s.Status, s.CredentialVersion = "Renamed", model.StoreVerified, 2
		s.SealedCredentials = []byte{0, 1, 2, 0xfe, 0xff}
		s.UpdatedAt = s.UpdatedAt.Add(90 * time.Minute)
	},
	immutable: func(s *model.Store) {
		s.Platform, s.ExternalShopID = "amazon", "other-"+uuid.NewString()
		s.CreatedAt = s.CreatedAt.Add(-time.Hour)
	},
}

// newStore returns an unsaved store of workspace with a fresh id and shop,
// and sealed credentials that hold every byte value a driver might mangle.
func newStore(workspace uuid.UUID) model.Store {
	at := now()
	sealed := make([]byte, 0, 256+16)
	for b := range 256 {
		sealed = append(sealed, byte(b))
	}
	id := uuid.New()
	sealed = append(sealed, id[:]...)
	return model.Store{
		ID:                id,
		WorkspaceID:       workspace,
		Platform:          "shopify",
		Name:              "Store " + id.String()[:8],
		ExternalShopID:    "shop-" + uuid.NewString(),
		Status:            model.StorePendingVerification,
		CredentialVersion: 1,
		SealedCredentials: sealed,
		CreatedAt:         at,
		UpdatedAt:         at,
	}
}

// createStore writes s, which must succeed.
func createStore(t *testing.T, h Harness, s model.Store) {
	t.Helper()
	require.NoError(t, storeTable.create(t, h, s))
}

func testStores(t *testing.T, h Harness) {
	t.Run("the same shop twice in a workspace is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		first := newStore(ws)
		createStore(t, h, first)
		second := newStore(ws)
		second.ExternalShopID = first.ExternalShopID
		// The conflict names the store that holds the shop.
		requireResource(t, storeTable.create(t, h, second), domain.CodeStoreExists, first.ID)
		_, err := storeTable.get(t, h, ws, second.ID)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("the same shop twice in one transaction is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		first, second := newStore(ws), newStore(ws)
		second.ExternalShopID = first.ExternalShopID
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			if err := tx.Stores().Create(ctx, first); err != nil {
				return err
			}
			err := tx.Stores().Create(ctx, second)
			requireResource(t, err, domain.CodeStoreExists, first.ID)
			return err
		})
		requireCode(t, err, domain.CodeStoreExists)
		_, err = storeTable.get(t, h, ws, first.ID)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("the same shop on another platform or in another workspace is fine", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		first := newStore(wsA)
		createStore(t, h, first)

		otherPlatform := newStore(wsA)
		otherPlatform.Platform = "amazon"
		otherPlatform.ExternalShopID = first.ExternalShopID
		createStore(t, h, otherPlatform)

		otherWorkspace := newStore(wsB)
		otherWorkspace.ExternalShopID = first.ExternalShopID
		createStore(t, h, otherWorkspace)

		got, err := storeTable.get(t, h, wsB, otherWorkspace.ID)
		require.NoError(t, err)
		require.Equal(t, first.ExternalShopID, got.ExternalShopID)
	})
}

// The stores kind's contract (kinds.go).
var _ = registerKind("stores", kindContract{
	table: storeTable.check, own: testStores,
	list: listing(byStatus(storeTable, func(s *model.Store) *model.StoreStatus { return &s.Status }, model.StoreVerified, model.StorePendingVerification)),
})
