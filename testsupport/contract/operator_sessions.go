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

// OperatorSessions is the contract of ports.OperatorSessions: a session
// made is found until it expires, a revoked one is not, and revoking an
// operator's sessions ends all of theirs and no one else's. Every test
// uses operators and ids of its own, so store may be shared.
func OperatorSessions(t *testing.T, store ports.OperatorSessions) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	session := func(operator string, ttl time.Duration) model.OperatorSession {
		return model.OperatorSession{ID: uuid.NewString(), Operator: operator, Credential: "fp-" + operator,
			CreatedAt: now, ExpiresAt: now.Add(ttl)}
	}
	found := func(t *testing.T, id string, at time.Time) bool {
		t.Helper()
		_, ok, err := store.Get(ctx, id, at)
		require.NoError(t, err)
		return ok
	}

	t.Run("found until it expires", func(t *testing.T) {
		s := session("alice-"+uuid.NewString(), time.Hour)
		require.NoError(t, store.Create(ctx, s))
		got, ok, err := store.Get(ctx, s.ID, now.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, s.Operator, got.Operator)
		assert.Equal(t, s.Credential, got.Credential)
		assert.True(t, got.ExpiresAt.Equal(s.ExpiresAt))
		assert.False(t, found(t, s.ID, now.Add(time.Hour)), "expired")
		assert.False(t, found(t, uuid.NewString(), now), "never made")
	})

	t.Run("a revoked session is not found", func(t *testing.T) {
		s := session("bob-"+uuid.NewString(), time.Hour)
		require.NoError(t, store.Create(ctx, s))
		require.NoError(t, store.Revoke(ctx, s.ID))
		assert.False(t, found(t, s.ID, now))
		require.NoError(t, store.Revoke(ctx, s.ID), "twice is no error")
	})

	t.Run("revoking an operator ends all of theirs and no one else's", func(t *testing.T) {
		carol, dave := "carol-"+uuid.NewString(), "dave-"+uuid.NewString()
		c1, c2, gone, d := session(carol, time.Hour), session(carol, 2*time.Hour), session(carol, time.Minute), session(dave, time.Hour)
		for _, s := range []model.OperatorSession{c1, c2, gone, d} {
			require.NoError(t, store.Create(ctx, s))
		}
		n, err := store.RevokeOperator(ctx, carol, now.Add(30*time.Minute))
		require.NoError(t, err)
		assert.Equal(t, 2, n, "the live ones")
		assert.False(t, found(t, c1.ID, now))
		assert.False(t, found(t, c2.ID, now))
		assert.True(t, found(t, d.ID, now), "another operator's")
		n, err = store.RevokeOperator(ctx, carol, now)
		require.NoError(t, err)
		assert.Zero(t, n)
	})
}
