package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

const relayHold = 5 * time.Second

// startRelay runs a relay over e's database until the test ends and
// returns it with the unit of work that writes through it.
func (e *env) startRelay(t *testing.T, pub ports.Publisher, hooks dispatch.RelayHooks) (*dispatch.Relay, ports.UnitOfWork) {
	t.Helper()
	r, err := dispatch.NewRelay(dispatch.RelayConfig{Holder: "relay-test", Hold: relayHold, BreakerOpen: time.Hour},
		dispatch.RelayDeps{Marks: memory.NewOutboxRelayMarks(e.db), Publisher: pub, Clock: e.clock, Logger: e.logger(), Hooks: hooks})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return r, r.UnitOfWork(e.uow)
}

// commit appends n events to ws through uow and returns them.
func (e *env) commit(t *testing.T, uow ports.UnitOfWork, ws uuid.UUID, n int) []model.OutboxEvent {
	t.Helper()
	events := make([]model.OutboxEvent, n)
	for i := range events {
		ev, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), ws, "test.event", "thing", uuid.New(), payload{N: i}, e.clock.Now())
		require.NoError(t, err)
		events[i] = ev
	}
	require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, events...)
	}))
	return events
}

// waitStatus waits until every event reached status: the relay works on
// goroutines of its own, and its outcome is the events' state.
func (e *env) waitStatus(t *testing.T, events []model.OutboxEvent, check func(model.OutboxEvent) bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, ev := range events {
			if !check(e.event(t, ev.WorkspaceID, ev.ID)) {
				return false
			}
		}
		return true
	}, 30*time.Second, time.Millisecond)
}

func dispatched(ev model.OutboxEvent) bool { return ev.Status == model.OutboxDispatched }

func TestRelayPublishesAndMarksWithoutADispatcher(t *testing.T) {
	e := newEnv(t)
	pub := &recorder{}
	_, uow := e.startRelay(t, pub, dispatch.RelayHooks{})
	ws1, ws2 := uuid.New(), uuid.New()
	events := append(e.commit(t, uow, ws1, 3), e.commit(t, uow, ws2, 2)...)

	e.waitStatus(t, events, dispatched)
	counts := pub.countByID()
	for _, ev := range events {
		require.Equal(t, 1, counts[ev.ID], "published once, with the event id as message id")
		got := e.event(t, ev.WorkspaceID, ev.ID)
		require.Empty(t, got.LockedBy)
		require.Zero(t, got.AttemptCount)
	}
	// A Dispatcher, even after the hold, finds nothing left to do.
	e.clock.Advance(2 * relayHold)
	res, err := e.dispatcher(t, dispatch.Config{}, pub).RunOnce(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Published)
}

// The relay is held between the commit and the publish: no Dispatcher
// claims the event until the hold ends; then one delivers it without an
// attempt counted, and the relay's late mark leaves it alone.
func TestRelayHeldEventIsLeftAloneByDispatchersUntilTheHoldEnds(t *testing.T) {
	e := newEnv(t)
	pub := &recorder{}
	committed, proceed := make(chan []model.OutboxEvent, 1), make(chan struct{})
	_, uow := e.startRelay(t, pub, dispatch.RelayHooks{Committed: func(events []model.OutboxEvent) {
		committed <- events
		<-proceed
	}})
	ws := uuid.New()
	go e.commit(t, uow, ws, 1)
	events := <-committed // committed, not yet handed to the relay
	ev := e.event(t, ws, events[0].ID)
	require.Equal(t, model.OutboxPending, ev.Status)
	require.Equal(t, "relay-test", ev.LockedBy)

	d := e.dispatcher(t, dispatch.Config{}, pub)
	e.clock.Advance(relayHold - time.Millisecond)
	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Published, "claimed while held")
	require.Empty(t, pub.countByID())

	e.clock.Advance(time.Millisecond)
	res, err = d.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published, "the hold ended")
	ev = e.event(t, ws, events[0].ID)
	require.Equal(t, model.OutboxDispatched, ev.Status)
	require.Zero(t, ev.AttemptCount, "a writer's hold ending costs no attempt")

	// The writer wakes up: it publishes again (at-least-once, same
	// message id) and its mark changes nothing.
	close(proceed)
	require.Eventually(t, func() bool { return pub.countByID()[ev.ID] == 2 }, 30*time.Second, time.Millisecond)
	require.Equal(t, ev, e.event(t, ws, ev.ID))
}

// The broker is unreachable when the relay publishes: the events go to the
// Dispatchers at once, with the reason and without an attempt counted.
func TestRelayReleasesAtOnceWhenTheBrokerIsUnreachable(t *testing.T) {
	e := newEnv(t)
	down := &recorder{fail: func([]ports.Message) error {
		return fmt.Errorf("dial tcp: connection refused: %w", ports.ErrBrokerUnreachable)
	}}
	_, uow := e.startRelay(t, down, dispatch.RelayHooks{})
	events := e.commit(t, uow, uuid.New(), 2)
	e.waitStatus(t, events, func(ev model.OutboxEvent) bool { return ev.LockedBy == "" })
	for _, ev := range events {
		got := e.event(t, ev.WorkspaceID, ev.ID)
		require.Equal(t, model.OutboxPending, got.Status)
		require.Zero(t, got.AttemptCount)
		require.Equal(t, e.clock.Now(), got.NextAttemptAt)
		require.Contains(t, got.LastError, "connection refused")
	}
	up := &recorder{}
	res, err := e.dispatcher(t, dispatch.Config{}, up).RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, res.Published, "due at once, not after the hold")
}

// The broker refuses the events themselves: released as well, for the
// Dispatchers' attempts and backoff.
func TestRelayReleasesRefusedEvents(t *testing.T) {
	e := newEnv(t)
	refusing := &recorder{fail: func([]ports.Message) error { return errors.New("nack") }}
	_, uow := e.startRelay(t, refusing, dispatch.RelayHooks{})
	events := e.commit(t, uow, uuid.New(), 1)
	e.waitStatus(t, events, func(ev model.OutboxEvent) bool { return ev.LockedBy == "" })
	got := e.event(t, events[0].WorkspaceID, events[0].ID)
	require.Equal(t, model.OutboxPending, got.Status)
	require.Contains(t, got.LastError, "nack")
}

// The writer dies after the publish, before the mark: the event stays
// held, and a Dispatcher publishes it again once the hold ends.
func TestRelayDeathBeforeTheMarkIsMadeUpForAfterTheHold(t *testing.T) {
	e := newEnv(t)
	pub := &recorder{}
	published, dead := make(chan struct{}), make(chan struct{})
	_, uow := e.startRelay(t, pub, dispatch.RelayHooks{Published: func([]model.OutboxEvent) {
		close(published)
		<-dead // the process is gone: no mark
	}})
	t.Cleanup(func() { close(dead) }) // before the relay's stop, which waits for it
	events := e.commit(t, uow, uuid.New(), 1)
	<-published
	d := e.dispatcher(t, dispatch.Config{}, pub)
	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Published)
	e.clock.Advance(relayHold)
	res, err = d.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)
	require.Equal(t, 2, pub.countByID()[events[0].ID], "at-least-once: the same message id twice")
	require.Zero(t, e.event(t, events[0].WorkspaceID, events[0].ID).AttemptCount)
}

// A job meant for later is written as given and left to the Dispatchers.
func TestRelayLeavesLaterJobsToTheDispatchers(t *testing.T) {
	e := newEnv(t)
	_, uow := e.startRelay(t, &recorder{}, dispatch.RelayHooks{})
	ws := uuid.New()
	ev, err := model.NewOutboxEvent(uuid.New(), ws, "test.event", "thing", uuid.New(), payload{}, e.clock.Now())
	require.NoError(t, err)
	ev.NextAttemptAt = e.clock.Now().Add(time.Hour)
	require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, ev)
	}))
	got := e.event(t, ws, ev.ID)
	require.Empty(t, got.LockedBy)
	require.Equal(t, ev.NextAttemptAt, got.NextAttemptAt)
}

// An event with an ordering key may have to wait for an earlier job of its
// key, which only the Dispatcher's claim knows (it reads the key's order in
// the outbox): the relay leaves every keyed event to the Dispatchers and
// publishes nothing of it, even when it comes in one commit with events it
// does publish. The second job of key "store/a" here is blocked by the
// first, which has not run.
func TestRelayLeavesKeyedEventsToTheDispatchers(t *testing.T) {
	e := newEnv(t)
	pub := &recorder{}
	_, uow := e.startRelay(t, pub, dispatch.RelayHooks{})
	ws := uuid.New()
	var events []model.OutboxEvent
	for i, key := range []string{"store/a", "store/a", ""} {
		ev, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), ws, "test.event", "thing", uuid.New(), payload{N: i}, e.clock.Now())
		require.NoError(t, err)
		ev.OrderingKey = key
		events = append(events, ev)
	}
	require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, events...)
	}))
	unkeyed := events[2]
	e.waitStatus(t, []model.OutboxEvent{unkeyed}, dispatched)

	counts := pub.countByID()
	require.Equal(t, 1, counts[unkeyed.ID], "the event without a key goes out through the relay")
	for _, keyed := range events[:2] {
		require.Zero(t, counts[keyed.ID], "published by the relay")
		got := e.event(t, ws, keyed.ID)
		require.Equal(t, model.OutboxPending, got.Status)
		require.Empty(t, got.LockedBy, "not held: the Dispatchers' at once")
		require.False(t, got.NextAttemptAt.After(e.clock.Now()), "due now")
	}
}

// The same hold on PostgreSQL: the held row is not claimed by a Dispatcher
// before the hold ends, and is after, uncounted; the relay's late mark,
// fenced by holder and status, leaves the Dispatcher's delivery alone.
func TestRelayHeldEventOnPostgres(t *testing.T) {
	e, uow, ws := postgresEnv(t)
	pub := &recorder{}
	committed, proceed := make(chan []model.OutboxEvent, 1), make(chan struct{})
	r, err := dispatch.NewRelay(dispatch.RelayConfig{Holder: "relay-test", Hold: relayHold},
		dispatch.RelayDeps{Marks: postgres.NewOutboxRelayMarks(uow), Publisher: pub, Clock: e.clock, Logger: e.logger(),
			Hooks: dispatch.RelayHooks{Committed: func(events []model.OutboxEvent) {
				committed <- events
				<-proceed
			}}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	t.Cleanup(func() {
		select {
		case <-proceed:
		default:
			close(proceed)
		}
	})

	go e.commit(t, r.UnitOfWork(uow), ws, 1)
	events := <-committed
	d := e.dispatcher(t, dispatch.Config{}, pub)
	e.clock.Advance(relayHold - time.Millisecond)
	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Published, "claimed while held")

	e.clock.Advance(time.Millisecond)
	res, err = d.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published, "the hold ended")
	close(proceed)
	require.Eventually(t, func() bool { return pub.countByID()[events[0].ID] == 2 }, 30*time.Second, time.Millisecond)
	got := e.event(t, ws, events[0].ID)
	require.Equal(t, model.OutboxDispatched, got.Status)
	require.Zero(t, got.AttemptCount)
}
