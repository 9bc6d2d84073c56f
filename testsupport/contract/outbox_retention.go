package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// fixedClock is a ports.Clock that always says the same time.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// testOutboxRetention: the retention of dispatched events through
// OutboxPartitions and the row deletion together (dispatch.RetentionCleaner),
// as every store must behave. Harness.OutboxPartitions slices time in hours
// or less (the PostgreSQL harness: one-hour partitions), so an event
// dispatched more than two hours before the horizon is in no slice that
// straddles it.
func testOutboxRetention(t *testing.T, h Harness) {
	t.Run("old dispatched events go, in a slice or not; the rest stays", func(t *testing.T) {
		ctx := context.Background()
		ws := uuid.New()
		now := time.Now().UTC().Truncate(time.Second)
		base := now.Add(-6 * time.Hour)
		// Slices for base's hour and the two after it; nothing before
		// base, nothing around now.
		_, err := h.OutboxPartitions.Prepare(ctx, base)
		require.NoError(t, err)

		inSlice := dispatchedEvent(t, h, ws, base)
		beforeSlices := dispatchedEvent(t, h, ws, base.Add(-3*time.Hour))
		recentSlice := dispatchedEvent(t, h, ws, base.Add(2*time.Hour+30*time.Minute))
		noSlice := dispatchedEvent(t, h, ws, now.Add(-time.Minute))
		dead := deadLetterEvent(t, h, ws, base.Add(-4*time.Hour))
		pending := eventDueAt(t, ws, base.Add(-5*time.Hour))
		appendEvents(t, h, ws, pending)

		// Horizon: two hours after base. base's slice has wholly expired;
		// the slice of recentSlice has not.
		cleaner := dispatch.NewRetentionCleaner(h.OutboxDiscovery, h.OutboxPartitions, h.UoW, fixedClock(now), now.Sub(base)-2*time.Hour, 1)
		n, err := cleaner.RunOnce(ctx)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, 1, "at least the row outside any slice is counted")

		var left []uuid.UUID
		require.NoError(t, transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			events, err := tx.Outbox().List(ctx, "", 100)
			for _, e := range events {
				left = append(left, e.ID)
			}
			return err
		}))
		require.ElementsMatch(t, []uuid.UUID{recentSlice, noSlice, dead, pending.ID}, left,
			"gone: %s (in an expired slice), %s (older than every slice)", inSlice, beforeSlices)
		require.Equal(t, model.OutboxDeadLetter, mustGetEvent(t, h, ws, dead).Status)

		n, err = cleaner.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "nothing more to remove")
	})
}
