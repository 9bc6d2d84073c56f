package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// TokenRevocations is the contract of ports.TokenRevocations: what is
// recorded comes back from Changes, a later call's cursor misses nothing
// recorded since, the latest cutoff wins, and the sweep takes only expired
// tokens, a batch at a time. Every test uses ids of its own, so store may
// be shared by other tests.
func TokenRevocations(t *testing.T, store ports.TokenRevocations) {
	ctx := context.Background()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	token := func(expires time.Time) model.RevokedToken {
		return model.RevokedToken{ID: "jti:" + uuid.NewString(), ExpiresAt: expires}
	}
	changes := func(t *testing.T, since int64) (map[string]model.RevokedToken, map[[2]uuid.UUID]time.Time, int64) {
		t.Helper()
		c, next, err := store.Changes(ctx, since)
		require.NoError(t, err)
		tokens := map[string]model.RevokedToken{}
		for _, r := range c.Tokens {
			tokens[r.ID] = r
		}
		cutoffs := map[[2]uuid.UUID]time.Time{}
		for _, r := range c.Cutoffs {
			cutoffs[[2]uuid.UUID{r.WorkspaceID, r.UserID}] = r.NotBefore
		}
		return tokens, cutoffs, next
	}

	t.Run("a revoked token comes back, once however often it is recorded", func(t *testing.T) {
		revoked := token(at)
		require.NoError(t, store.RevokeToken(ctx, revoked))
		again := revoked
		again.ExpiresAt = at.Add(time.Hour)
		require.NoError(t, store.RevokeToken(ctx, again), "recorded twice")
		tokens, _, _ := changes(t, 0)
		got, ok := tokens[revoked.ID]
		require.True(t, ok, "the revoked token")
		assert.True(t, revoked.ExpiresAt.Equal(got.ExpiresAt), "the first record stays: %s", got.ExpiresAt)
	})

	t.Run("the next cursor misses nothing recorded after", func(t *testing.T) {
		_, _, next := changes(t, 0)
		revoked := token(at)
		cutoff := model.TokenCutoff{WorkspaceID: uuid.New(), UserID: uuid.New(), NotBefore: at}
		require.NoError(t, store.RevokeToken(ctx, revoked))
		require.NoError(t, store.RevokeTokensBefore(ctx, cutoff))
		tokens, cutoffs, next := changes(t, next)
		assert.Contains(t, tokens, revoked.ID)
		assert.True(t, cutoffs[[2]uuid.UUID{cutoff.WorkspaceID, cutoff.UserID}].Equal(at))

		later := token(at)
		require.NoError(t, store.RevokeToken(ctx, later))
		tokens, _, _ = changes(t, next)
		assert.Contains(t, tokens, later.ID, "recorded after the second call")
	})

	t.Run("the latest cutoff wins, and comes back when it moves", func(t *testing.T) {
		ws, user := uuid.New(), uuid.New()
		key := [2]uuid.UUID{ws, user}
		require.NoError(t, store.RevokeTokensBefore(ctx, model.TokenCutoff{WorkspaceID: ws, UserID: user, NotBefore: at}))
		_, cutoffs, next := changes(t, 0)
		require.True(t, cutoffs[key].Equal(at))

		require.NoError(t, store.RevokeTokensBefore(ctx, model.TokenCutoff{WorkspaceID: ws, UserID: user, NotBefore: at.Add(-time.Hour)}))
		_, cutoffs, _ = changes(t, 0)
		assert.True(t, cutoffs[key].Equal(at), "an earlier cutoff does not replace a later one: %s", cutoffs[key])

		require.NoError(t, store.RevokeTokensBefore(ctx, model.TokenCutoff{WorkspaceID: ws, UserID: user, NotBefore: at.Add(time.Hour)}))
		_, cutoffs, _ = changes(t, next)
		assert.True(t, cutoffs[key].Equal(at.Add(time.Hour)), "the later one, since the cursor: %s", cutoffs[key])
		other := model.TokenCutoff{WorkspaceID: uuid.New(), UserID: user, NotBefore: at}
		require.NoError(t, store.RevokeTokensBefore(ctx, other))
		_, cutoffs, _ = changes(t, 0)
		assert.True(t, cutoffs[key].Equal(at.Add(time.Hour)), "another workspace's cutoff of the same user is its own")
	})

	t.Run("the sweep takes expired tokens only, a batch at a time", func(t *testing.T) {
		// Long expired: no other test's token expires before 2002.
		old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
		expired := []model.RevokedToken{token(old), token(old.Add(time.Second)), token(old.Add(2 * time.Second))}
		for _, r := range expired {
			require.NoError(t, store.RevokeToken(ctx, r))
		}
		live := token(time.Date(2001, 6, 1, 0, 0, 0, 0, time.UTC))
		require.NoError(t, store.RevokeToken(ctx, live))
		before := time.Date(2001, 2, 1, 0, 0, 0, 0, time.UTC)
		n, err := store.SweepExpired(ctx, before, 2)
		require.NoError(t, err)
		assert.Equal(t, 2, n, "one batch")
		n, err = store.SweepExpired(ctx, before, 2)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "the rest")
		tokens, _, _ := changes(t, 0)
		for _, r := range expired {
			assert.NotContains(t, tokens, r.ID)
		}
		assert.Contains(t, tokens, live.ID, "not yet expired at the sweep's time")
	})
}
