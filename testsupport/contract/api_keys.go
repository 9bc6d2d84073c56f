package contract

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// apiKeys is tx's API key repository.
func apiKeys(tx ports.Tx) ports.APIKeyRepository { return ports.Repository[ports.APIKeyRepository](tx) }

// newAPIKey returns an unsaved key of workspace with a fresh lookup id
// and a hash holding every byte value.
func newAPIKey(workspace uuid.UUID) model.APIKey {
	sum := make([]byte, 0, 256)
	for b := range 256 {
		sum = append(sum, byte(b))
	}
	return model.APIKey{
		ID: uuid.Must(uuid.NewV7()), WorkspaceID: workspace, LookupID: strings.ReplaceAll(uuid.NewString(), "-", "")[:12], Name: "ERP sync",
		Scopes: []model.Scope{model.ScopeMediaRead, model.ScopeProductsWrite}, CreatedBy: uuid.New(), Role: model.RoleAdmin,
		HashKeyID: "k1", Hash: sum, CreatedAt: now(),
	}
}

func createAPIKey(t *testing.T, h Harness, k model.APIKey) error {
	t.Helper()
	return transact(t, h, k.WorkspaceID, func(ctx context.Context, tx ports.Tx) error { return apiKeys(tx).Create(ctx, k) })
}

func getAPIKey(t *testing.T, h Harness, ws, id uuid.UUID) (model.APIKey, error) {
	t.Helper()
	return query(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.APIKey, error) { return apiKeys(tx).Get(ctx, id) })
}

func testAPIKeys(t *testing.T, h Harness) {
	t.Run("a key reads back as written, by id, by lookup id and in the list", func(t *testing.T) {
		ws := newWorkspace(t, h)
		k := newAPIKey(ws)
		require.NoError(t, createAPIKey(t, h, k))
		got, err := getAPIKey(t, h, ws, k.ID)
		require.NoError(t, err)
		assert.Equal(t, k, got)
		byLookup := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.APIKey, error) {
			return apiKeys(tx).ByLookupID(ctx, k.LookupID)
		})
		assert.Equal(t, k, byLookup)
		newer := newAPIKey(ws)
		require.NoError(t, createAPIKey(t, h, newer))
		list := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.APIKey, error) {
			return apiKeys(tx).List(ctx, ports.ListQuery{Limit: 10})
		})
		assert.Equal(t, []uuid.UUID{newer.ID, k.ID}, ids(list, func(k model.APIKey) uuid.UUID { return k.ID }), "newest first")
	})

	t.Run("the directory finds a key's workspace; the key is read only under it", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		k := newAPIKey(ws)
		require.NoError(t, createAPIKey(t, h, k))
		found, err := h.APIKeyDirectory.WorkspaceOf(t.Context(), k.LookupID)
		require.NoError(t, err)
		assert.Equal(t, ws, found)
		_, err = h.APIKeyDirectory.WorkspaceOf(t.Context(), "nonexistent0")
		requireCode(t, err, domain.CodeNotFound)

		_, err = getAPIKey(t, h, other, k.ID)
		requireCode(t, err, domain.CodeNotFound)
		_, err = query(t, h, other, func(ctx context.Context, tx ports.Tx) (model.APIKey, error) {
			return apiKeys(tx).ByLookupID(ctx, k.LookupID)
		})
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("a key rolled back is not in the directory", func(t *testing.T) {
		ws := newWorkspace(t, h)
		k := newAPIKey(ws)
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			if err := apiKeys(tx).Create(ctx, k); err != nil {
				return err
			}
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		_, err = h.APIKeyDirectory.WorkspaceOf(t.Context(), k.LookupID)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("a lookup id is unique across workspaces", func(t *testing.T) {
		k := newAPIKey(newWorkspace(t, h))
		require.NoError(t, createAPIKey(t, h, k))
		twin := newAPIKey(newWorkspace(t, h))
		twin.LookupID = k.LookupID
		requireCode(t, createAPIKey(t, h, twin), domain.CodeConflict)
	})

	t.Run("revoke keeps the first time; an unknown key is not found", func(t *testing.T) {
		ws := newWorkspace(t, h)
		k := newAPIKey(ws)
		require.NoError(t, createAPIKey(t, h, k))
		revoke := func(id uuid.UUID, at time.Time) (model.APIKey, error) {
			return query(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.APIKey, error) {
				return apiKeys(tx).Revoke(ctx, id, at)
			})
		}
		at := now().Add(time.Minute)
		got, err := revoke(k.ID, at)
		require.NoError(t, err)
		assert.Equal(t, at, got.RevokedAt)
		got, err = revoke(k.ID, at.Add(time.Hour))
		require.NoError(t, err)
		assert.Equal(t, at, got.RevokedAt, "the first revocation's time")
		stored, err := getAPIKey(t, h, ws, k.ID)
		require.NoError(t, err)
		assert.Equal(t, at, stored.RevokedAt)
		_, err = revoke(uuid.New(), at)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("mark used writes at most once per interval, and moves the hash when asked", func(t *testing.T) {
		ws := newWorkspace(t, h)
		k := newAPIKey(ws)
		require.NoError(t, createAPIKey(t, h, k))
		mark := func(id uuid.UUID, at time.Time, keyID string, sum []byte) model.APIKey {
			mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
				return apiKeys(tx).MarkUsed(ctx, id, at, time.Minute, keyID, sum)
			})
			got, err := getAPIKey(t, h, ws, k.ID)
			require.NoError(t, err)
			return got
		}
		first := now()
		assert.Equal(t, first, mark(k.ID, first, "", nil).LastUsedAt, "never used: written")
		got := mark(k.ID, first.Add(30*time.Second), "k2", []byte{1, 2})
		assert.Equal(t, first, got.LastUsedAt, "within the interval: nothing written")
		assert.Equal(t, "k1", got.HashKeyID)
		later := first.Add(61 * time.Second)
		got = mark(k.ID, later, "k2", []byte{1, 2})
		assert.Equal(t, later, got.LastUsedAt)
		assert.Equal(t, "k2", got.HashKeyID)
		assert.Equal(t, []byte{1, 2}, got.Hash)
		got = mark(k.ID, later.Add(time.Hour), "", nil)
		assert.Equal(t, "k2", got.HashKeyID, "no key id: the hash is kept")
		assert.Equal(t, []byte{1, 2}, got.Hash)

		mark(uuid.New(), later, "", nil) // an unknown key: no error
		_, err := query(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.APIKey, error) {
			return apiKeys(tx).Revoke(ctx, k.ID, later)
		})
		require.NoError(t, err)
		assert.Equal(t, later.Add(time.Hour), mark(k.ID, later.Add(3*time.Hour), "", nil).LastUsedAt, "a revoked key: nothing written")
	})
}
