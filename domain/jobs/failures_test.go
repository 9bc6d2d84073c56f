package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// fixedClock is a ports.Clock that stays at one instant.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// A job that must wait is parked durably: its event is pending from
// until, with the attempts the worker counted and a sanitized reason;
// an event that is not in flight is left alone.
func TestDeferParksTheJobsEvent(t *testing.T) {
	db := memory.NewDB()
	uow := memory.NewUnitOfWork(db)
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	f := jobs.NewFailures(uow, fixedClock(at), nil)
	ws := uuid.New()
	ev, err := model.NewOutboxEvent(uuid.New(), ws, model.EventStoreCredentialsVerify, "store", uuid.New(), map[string]int{"n": 1}, at)
	require.NoError(t, err)
	get := func() model.OutboxEvent {
		got, err := ports.Query(context.Background(), uow, ws, func(ctx context.Context, tx ports.Tx) (model.OutboxEvent, error) {
			return tx.Outbox().Get(ctx, ev.ID)
		})
		require.NoError(t, err)
		return got
	}
	require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Outbox().Append(ctx, ev); err != nil {
			return err
		}
		c, err := tx.OutboxDispatch().ClaimDue(ctx, "d1", at, time.Minute, 1, 5)
		require.Len(t, c.Events, 1)
		return err
	}))
	msg := ports.Message{ID: ev.ID, Type: ev.Type, WorkspaceID: ws, Attempts: 1}
	until := at.Add(time.Hour)

	wait := model.JobWait{Kind: model.JobWaitOutage, For: "shopify", Reason: "breaker open, password=hunter2"}
	require.NoError(t, f.Defer(context.Background(), msg, until, 2, wait))
	got := get()
	require.Equal(t, model.OutboxPending, got.Status)
	require.True(t, got.NextAttemptAt.Equal(until))
	require.Equal(t, 2, got.JobAttempts)
	require.True(t, got.ParkedByWorker(), "last error %q", got.LastError)
	require.Equal(t, model.JobWaitOutage, got.WaitKind)
	require.Equal(t, "shopify", got.WaitedFor)
	require.NotContains(t, got.LastError, "hunter2", "the reason is sanitized")

	// Parked already (a duplicate delivery): left as it is.
	require.NoError(t, f.Defer(context.Background(), msg, until.Add(time.Hour), 5, wait))
	require.Equal(t, got, get())

	// A message without a workspace has no row to park.
	require.NoError(t, f.Defer(context.Background(), ports.Message{ID: uuid.New()}, until, 0, wait))

	err = f.Defer(context.Background(), msg, until, -1, wait)
	require.True(t, domain.IsCode(err, domain.CodeValidation), "negative attempts: %v", err)
	require.Equal(t, got, get())
}
