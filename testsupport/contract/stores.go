package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

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

func normStore(s model.Store) model.Store {
	s.CreatedAt = dbTime(s.CreatedAt)
	s.UpdatedAt = dbTime(s.UpdatedAt)
	return s
}

func createStore(t *testing.T, h Harness, s model.Store) {
	t.Helper()
	mustTransact(t, h, s.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return tx.Stores().Create(ctx, s)
	})
}

func getStore(t *testing.T, h Harness, workspace, id uuid.UUID) (model.Store, error) {
	t.Helper()
	var s model.Store
	err := transact(t, h, workspace, func(ctx context.Context, tx ports.Tx) error {
		var err error
		s, err = tx.Stores().Get(ctx, id)
		return err
	})
	return s, err
}

func testStores(t *testing.T, h Harness) {
	t.Run("create then get keeps every field", func(t *testing.T) {
		ws := newWorkspace(t, h)
		s := newStore(ws)
		want := normStore(s)
		want.SealedCredentials = append([]byte(nil), s.SealedCredentials...)
		createStore(t, h, s)
		// The stored row must not share memory with the caller's value.
		s.SealedCredentials[0] ^= 0xff

		got, err := getStore(t, h, ws, want.ID)
		require.NoError(t, err)
		require.Equal(t, want, normStore(got))

		got.SealedCredentials[1] ^= 0xff
		again, err := getStore(t, h, ws, want.ID)
		require.NoError(t, err)
		require.Equal(t, want.SealedCredentials, again.SealedCredentials)
	})

	t.Run("update replaces the mutable fields only", func(t *testing.T) {
		ws := newWorkspace(t, h)
		s := newStore(ws)
		createStore(t, h, s)

		changed := s
		changed.Name = "Renamed"
		changed.Status = model.StoreVerified
		changed.CredentialVersion = 2
		changed.SealedCredentials = []byte{0, 1, 2, 0xfe, 0xff}
		changed.UpdatedAt = s.UpdatedAt.Add(90 * time.Minute)
		// Not mutable: these must be left as they were.
		changed.Platform = "amazon"
		changed.ExternalShopID = "other-" + uuid.NewString()
		changed.CreatedAt = s.CreatedAt.Add(-time.Hour)
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Stores().Update(ctx, changed)
		})

		want := normStore(s)
		want.Name = changed.Name
		want.Status = changed.Status
		want.CredentialVersion = changed.CredentialVersion
		want.SealedCredentials = changed.SealedCredentials
		want.UpdatedAt = dbTime(changed.UpdatedAt)
		got, err := getStore(t, h, ws, s.ID)
		require.NoError(t, err)
		require.Equal(t, want, normStore(got))
	})

	t.Run("missing is not found", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getStore(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		err = transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Stores().Update(ctx, newStore(ws))
		})
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("the same shop twice in a workspace is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		first := newStore(ws)
		createStore(t, h, first)
		second := newStore(ws)
		second.ExternalShopID = first.ExternalShopID
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Stores().Create(ctx, second)
		})
		requireCode(t, err, domain.CodeStoreExists)
		var de *domain.Error
		require.ErrorAs(t, err, &de)
		require.Equal(t, first.ID.String(), de.ResourceID, "the conflict names the store that holds the shop")
		_, err = getStore(t, h, ws, second.ID)
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
			var de *domain.Error
			require.ErrorAs(t, err, &de)
			require.Equal(t, first.ID.String(), de.ResourceID, "the conflict names the store that holds the shop")
			return err
		})
		requireCode(t, err, domain.CodeStoreExists)
		_, err = getStore(t, h, ws, first.ID)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		first := newStore(ws)
		createStore(t, h, first)
		second := newStore(ws)
		second.ID = first.ID
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Stores().Create(ctx, second)
		})
		requireCode(t, err, domain.CodeConflict)
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

		got, err := getStore(t, h, wsB, otherWorkspace.ID)
		require.NoError(t, err)
		require.Equal(t, first.ExternalShopID, got.ExternalShopID)
	})

	t.Run("a store of another workspace is invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		s := newStore(wsA)
		createStore(t, h, s)

		_, err := getStore(t, h, wsB, s.ID)
		requireCode(t, err, domain.CodeNotFound)

		hijack := s
		hijack.Name = "hijacked"
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error {
			return tx.Stores().Update(ctx, hijack)
		})
		requireCode(t, err, domain.CodeNotFound)

		got, err := getStore(t, h, wsA, s.ID)
		require.NoError(t, err)
		require.Equal(t, s.Name, got.Name)
	})
}
