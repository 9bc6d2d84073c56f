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

// RateLimiter is the contract of ports.RateLimiter, for the in-process and
// the Redis limiter alike: a workspace gets its burst at once, then is
// refused with the time until the next request, a refusal spends nothing,
// and workspaces do not share. The rates are per hour, so that the
// allowance the test's own duration gives back is nil and nothing depends
// on timing. forget removes what the limiter kept for a workspace (the
// Redis keys), when the test is done.
func RateLimiter(t *testing.T, l ports.RateLimiter, forget func(uuid.UUID)) {
	ctx := context.Background()
	workspace := func() uuid.UUID {
		ws := uuid.New()
		t.Cleanup(func() { forget(ws) })
		return ws
	}
	take := func(ws uuid.UUID, r model.Rate) model.RateDecision {
		t.Helper()
		d, err := l.Take(ctx, ws, r)
		require.NoError(t, err)
		return d
	}

	t.Run("the burst at once, then refusals that say when", func(t *testing.T) {
		rate := model.Rate{Requests: 3, Per: time.Hour, Burst: 3}
		ws := workspace()
		for want := 2; want >= 0; want-- {
			d := take(ws, rate)
			assert.True(t, d.Allowed)
			assert.Equal(t, want, d.Remaining)
		}
		first := take(ws, rate)
		assert.False(t, first.Allowed)
		assert.Zero(t, first.Remaining)
		assert.Positive(t, first.RetryAfter)
		assert.LessOrEqual(t, first.RetryAfter, rate.Interval(), "one interval at most brings one request back")

		again := take(ws, rate)
		assert.False(t, again.Allowed)
		assert.LessOrEqual(t, again.RetryAfter, first.RetryAfter, "a refusal spends nothing: the wait does not grow")
	})

	t.Run("a burst above the rate", func(t *testing.T) {
		rate := model.Rate{Requests: 1, Per: time.Hour, Burst: 2}
		ws := workspace()
		assert.True(t, take(ws, rate).Allowed)
		assert.True(t, take(ws, rate).Allowed)
		d := take(ws, rate)
		assert.False(t, d.Allowed)
		assert.Greater(t, d.RetryAfter, 50*time.Minute, "the next request is about an hour away")
	})

	t.Run("workspaces apart", func(t *testing.T) {
		rate := model.Rate{Requests: 1, Per: time.Hour, Burst: 1}
		a, b := workspace(), workspace()
		assert.True(t, take(a, rate).Allowed)
		assert.False(t, take(a, rate).Allowed)
		assert.True(t, take(b, rate).Allowed, "b is not charged for a")
	})
}
