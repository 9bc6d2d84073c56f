package dispatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The message of an event carries what the worker paces, orders and
// counts the job by, and when it was committed.
func TestMessagesCarryTheJobsDestinationOrderingKeyAttemptsAndCommitTime(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	ev, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), ws, "test.event", "thing", uuid.New(), payload{N: 1}, e.clock.Now())
	require.NoError(t, err)
	ev.Destination, ev.OrderingKey, ev.JobAttempts = "shopify/shop-1", "catalog/store-1", 2
	require.NoError(t, e.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, ev)
	}))
	pub := &recorder{}
	res, err := e.dispatcher(t, dispatch.Config{}, pub).RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)
	require.Len(t, pub.accepted, 1)
	m := pub.accepted[0]
	require.Equal(t, "shopify/shop-1", m.Destination)
	require.Equal(t, "catalog/store-1", m.OrderingKey)
	require.Equal(t, 2, m.Attempts)
	require.True(t, m.CreatedAt.Equal(e.clock.Now()), "created_at %s", m.CreatedAt)
}

// parkingBroker is a broker whose worker is quicker than the mark: while
// the publish is still in flight, it parks every job until `until`, as a
// worker does whose destination is down.
func parkingBroker(t *testing.T, uow ports.UnitOfWork, until time.Time) *recorder {
	return &recorder{fail: func(msgs []ports.Message) error {
		for _, m := range msgs {
			require.NoError(t, uow.Transact(context.Background(), m.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				parked, err := tx.Outbox().Defer(ctx, m.ID, until, m.Attempts, model.JobWait{Kind: model.JobWaitOutage, For: "shopify", Reason: "the destination is down"})
				require.True(t, parked)
				return err
			}))
		}
		return nil
	}}
}

// requireParkedQuietly asserts ev is parked until `until` and that nothing
// was logged as a warning or an error: a parked job is no takeover.
func (e *env) requireParkedQuietly(t *testing.T, ev model.OutboxEvent, until time.Time) {
	t.Helper()
	got := e.event(t, ev.WorkspaceID, ev.ID)
	require.Equal(t, model.OutboxPending, got.Status)
	require.True(t, got.NextAttemptAt.Equal(until), "next_attempt_at %s", got.NextAttemptAt)
	require.Empty(t, got.LockedBy)
	require.NotContains(t, e.logs.String(), "level=WARN")
	require.NotContains(t, e.logs.String(), "level=ERROR")
}

// On PostgreSQL, a job its worker parks before the Dispatcher's mark stays
// parked: the mark, fenced by status and owner, leaves it alone and counts
// it as settled, so no takeover is reported.
func TestAJobParkedBeforeTheDispatchersMarkStaysParked(t *testing.T) {
	e, uow, ws := postgresEnv(t)
	ev := e.commit(t, uow, ws, 1)[0]
	until := e.clock.Now().Add(time.Hour)
	d, err := dispatch.New(dispatch.Config{Owner: "dispatcher-1"}, dispatch.Deps{
		UnitOfWork: uow, Discovery: e.disc, Claims: postgres.NewOutboxClaims(uow),
		Publisher: parkingBroker(t, uow, until), Clock: e.clock, Logger: e.logger(),
	})
	require.NoError(t, err)
	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)
	e.requireParkedQuietly(t, ev, until)
}

// markCounts hears how many events each relay mark settled.
type markCounts struct{ marked chan int }

func (markCounts) Relayed([]model.OutboxEvent, time.Time) {}
func (markCounts) RelayReleased(int)                      {}
func (m markCounts) RelayMarked(n int)                    { m.marked <- n }

// The same for a writer's relay: its late mark leaves the parked job
// alone and counts it.
func TestAJobParkedBeforeTheRelaysMarkStaysParked(t *testing.T) {
	e, uow, ws := postgresEnv(t)
	until := e.clock.Now().Add(time.Hour)
	obs := markCounts{marked: make(chan int, 1)}
	r, err := dispatch.NewRelay(dispatch.RelayConfig{Holder: "relay-test", Hold: relayHold},
		dispatch.RelayDeps{Marks: postgres.NewOutboxRelayMarks(uow), Publisher: parkingBroker(t, uow, until),
			Clock: e.clock, Logger: e.logger(), Observer: obs})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	ev := e.commit(t, r.UnitOfWork(uow), ws, 1)[0]
	require.Equal(t, 1, <-obs.marked, "the parked event counts as settled")
	e.requireParkedQuietly(t, ev, until)
}
