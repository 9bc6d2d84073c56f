package dispatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Only dispatched events older than the retention go; pending and
// dead-lettered events stay whatever their age.
func TestRetentionCleanerDeletesOnlyOldDispatchedEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	wsA, wsB := uuid.New(), uuid.New()
	day := 24 * time.Hour

	pub := &recorder{}
	pub.setFail(func(msgs []ports.Message) error {
		if msgs[0].WorkspaceID == wsB {
			return errors.New("refused")
		}
		return nil
	})
	d := e.dispatcher(t, dispatch.Config{MaxAttempts: 1}, pub)

	old := e.appendEvents(t, wsA, 3)
	deadOld := e.appendEvents(t, wsB, 1)[0]
	_, err := d.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, model.OutboxDeadLetter, e.event(t, wsB, deadOld).Status)

	e.clock.Advance(6 * day)
	recent := e.appendEvents(t, wsA, 1)[0]
	_, err = d.RunOnce(ctx)
	require.NoError(t, err)
	pendingOld, err := model.NewOutboxEvent(uuid.New(), wsA, "test.event", "thing", uuid.New(), payload{}, e.clock.Now().Add(-30*day))
	require.NoError(t, err)
	pendingOld.NextAttemptAt = e.clock.Now().Add(day)
	require.NoError(t, e.uow.Transact(ctx, wsA, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, pendingOld)
	}))

	e.clock.Advance(2 * day)
	cleaner := dispatch.NewRetentionCleaner(e.disc, memory.NewOutboxPartitions(), e.uow, e.clock, 7*day, 1)
	n, err := cleaner.RunOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, n)

	var left []model.OutboxEvent
	require.NoError(t, e.uow.Transact(ctx, wsA, func(ctx context.Context, tx ports.Tx) error {
		var err error
		left, err = tx.Outbox().List(ctx, "", 100)
		return err
	}))
	var leftIDs []uuid.UUID
	for _, ev := range left {
		leftIDs = append(leftIDs, ev.ID)
	}
	assert.ElementsMatch(t, []uuid.UUID{recent, pendingOld.ID}, leftIDs)
	for _, id := range old {
		assert.NotContains(t, leftIDs, id)
	}
	assert.Equal(t, model.OutboxDeadLetter, e.event(t, wsB, deadOld).Status)

	n, err = cleaner.RunOnce(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
}
