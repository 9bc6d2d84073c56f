package dispatch_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// slowBroker stands for a broker that answers every publish of workspace
// ws, but only after `takes` of the Dispatcher's clock (RabbitMQ under flow
// control, say), for the first `slow` publishes; later ones, and those of
// other workspaces, it answers at once. It moves the test clock on by
// takes, or, when the publish's deadline comes first, by what was left of
// it, and then fails as a publish that outlived its deadline does. The test
// clock moves only here, so every lease and every deadline the Dispatcher
// works with is decided by these steps, not by how fast the machine runs.
//
// At the start of every publish, and when it answers, it checks in the
// database that each event is still owner's: dispatching, locked by owner,
// its lease not ended.
type slowBroker struct {
	e     *env
	ws    uuid.UUID
	owner string
	takes time.Duration
	slow  int
	// claimed holds the first slow publish until the test has seen every
	// batch claimed.
	claimed chan struct{}
	// during runs in the second slow publish, once the clock has moved.
	during func()

	mu         sync.Mutex
	calls      int
	violations []string
}

func (b *slowBroker) Publish(ctx context.Context, msgs ...ports.Message) error {
	if msgs[0].WorkspaceID != b.ws {
		return nil
	}
	b.mu.Lock()
	b.calls++
	call := b.calls
	b.mu.Unlock()
	b.checkLease(ctx, call, "published", msgs)
	if call > b.slow {
		return nil
	}
	if call == 1 {
		<-b.claimed
	}
	step := b.takes
	deadline, ok := ctx.Deadline()
	if ok {
		step = min(step, max(time.Until(deadline), 0))
	}
	b.e.clock.Advance(step)
	if call == 2 && b.during != nil {
		b.during()
	}
	if step < b.takes {
		return fmt.Errorf("no confirm in time: %w", context.DeadlineExceeded)
	}
	b.checkLease(ctx, call, "answered", msgs)
	return nil
}

// checkLease records every event of msgs that is not under owner's lease
// at the test clock's now.
func (b *slowBroker) checkLease(ctx context.Context, call int, when string, msgs []ports.Message) {
	now := b.e.clock.Now()
	for _, m := range msgs {
		var ev model.OutboxEvent
		err := b.e.uow.Transact(context.WithoutCancel(ctx), m.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			var err error
			ev, err = tx.Outbox().Get(ctx, m.ID)
			return err
		})
		var problem string
		switch {
		case err != nil:
			problem = err.Error()
		case ev.Status != model.OutboxDispatching || ev.LockedBy != b.owner:
			problem = fmt.Sprintf("%s, locked by %q", ev.Status, ev.LockedBy)
		case !ev.LockedUntil.After(now):
			problem = fmt.Sprintf("its lease ended %s before", now.Sub(ev.LockedUntil))
		}
		if problem != "" {
			b.mu.Lock()
			b.violations = append(b.violations, fmt.Sprintf("publish %d %s event %s: %s", call, when, m.ID, problem))
			b.mu.Unlock()
		}
	}
}

func (b *slowBroker) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.violations...)
}

// A busy workspace's batches wait for each other's publish (they reach the
// broker in claim order) while a slow broker answers each in less than the
// publish timeout. Their leases run from the claim: a batch that waited
// must not publish on an expired lease, nor be taken over by another
// Dispatcher with an attempt counted. Three batches are claimed at once;
// the broker takes 18s of a 30s lease over each (a 20s publish window), so
// the batches behind the first go back uncounted (2s left). When it
// answers the second publish, another Dispatcher runs a round: it may
// deliver events handed back to pending, but must take none over (an
// attempt counted, checked on every event below).
func TestABatchWaitingItsTurnIsNotTakenOverNorPublishedLate(t *testing.T) {
	db := pgtest.New(t)
	e := newEnv(t)
	uow := postgres.NewUnitOfWork(db.App)
	e.uow, e.disc = uow, postgres.NewOutboxDiscovery(db.App)
	ws := uuid.New()
	const lease = 30 * time.Second
	broker := &slowBroker{e: e, ws: ws, owner: "busy", takes: 18 * time.Second, slow: 2, claimed: make(chan struct{})}
	newDispatcher := func(owner string, pub ports.Publisher) *dispatch.Dispatcher {
		d, err := dispatch.New(dispatch.Config{Owner: owner, Batch: 2, Concurrency: 3, Lease: lease, PollInterval: 10 * time.Millisecond},
			dispatch.Deps{UnitOfWork: uow, Claims: postgres.NewOutboxClaims(uow), Discovery: e.disc, Publisher: pub, Clock: e.clock, Logger: e.logger()})
		require.NoError(t, err)
		return d
	}
	busy := newDispatcher("busy", broker)
	other := newDispatcher("other", &recorder{})
	var otherRes dispatch.Result
	var otherErr error
	broker.during = func() { otherRes, otherErr = other.RunOnce(context.Background()) }
	warmUp(t, e, busy)
	ids := e.appendEvents(t, ws, 6)

	runInBackground(t, busy)
	// All three batches claimed, the first held by the broker.
	e.waitIDs(t, ws, ids, func(ev model.OutboxEvent) bool {
		return ev.Status == model.OutboxDispatching && ev.LockedBy == "busy"
	})
	close(broker.claimed)

	e.waitIDs(t, ws, ids, dispatched)
	assert.Empty(t, broker.problems(), "every publish starts and ends under its batch's lease")
	require.NoError(t, otherErr)
	assert.Zero(t, otherRes.DeadLettered, "another Dispatcher took events over: %+v", otherRes)
	for i, id := range ids {
		ev := e.event(t, ws, id)
		assert.Zero(t, ev.AttemptCount, "event %d: an attempt counted for waiting (%s)", i, ev.LastError)
		assert.False(t, strings.Contains(ev.LastError, "lease expired"), "event %d: %s", i, ev.LastError)
	}
}

// steppedBroker answers the n-th publish of workspace ws after takes[n] of
// the test clock (at once past the end of takes), moving the clock on by
// that, or by what was left of the publish's deadline when that comes
// first; then it fails as a publish that outlived its deadline does. The
// first publish waits for claimed.
type steppedBroker struct {
	clock   *clock
	ws      uuid.UUID
	takes   []time.Duration
	claimed chan struct{}

	mu    sync.Mutex
	calls int
}

func (b *steppedBroker) Publish(ctx context.Context, msgs ...ports.Message) error {
	if msgs[0].WorkspaceID != b.ws {
		return nil
	}
	b.mu.Lock()
	call := b.calls
	b.calls++
	b.mu.Unlock()
	if call == 0 {
		<-b.claimed
	}
	if call >= len(b.takes) {
		return nil
	}
	step := b.takes[call]
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < step {
		b.clock.Advance(max(time.Until(deadline), 0))
		return fmt.Errorf("no confirm in time: %w", context.DeadlineExceeded)
	}
	b.clock.Advance(step)
	return nil
}

// A batch that waited for its workspace's batch before it has only what
// is left of its window (20s of a 30s lease) when its turn comes. With
// less than half of it left it goes back uncounted without a publish, and
// when the broker takes longer than what was left, the timeout is not
// counted against the broker: the wait took the time, and a broker that
// answers every publish in time for a batch that did not wait is healthy.
// Either way no attempt is counted, no error recorded, and the breaker
// (opening at the first failure) stays closed. synctest.Wait makes sure
// the second batch waits for the first before the broker answers it.
func TestABatchThatWaitedIsNotCountedAgainstTheBrokerForTheTimeItLost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		takes []time.Duration
		// publishes is how many publishes of the workspace the broker
		// sees: the second batch is not sent with 5s left of 20s.
		publishes int
	}{
		{"less than half its window left", []time.Duration{15 * time.Second, 15 * time.Second}, 2},
		{"the broker slower than what was left", []time.Duration{8 * time.Second, 15 * time.Second}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				ws := uuid.New()
				broker := &steppedBroker{clock: e.clock, ws: ws, takes: tc.takes, claimed: make(chan struct{})}
				obs := &countingObserver{}
				d, err := dispatch.New(dispatch.Config{
					Owner: "d", Batch: 2, Concurrency: 2, Lease: 30 * time.Second,
					BreakerFailures: 1, BreakerOpen: time.Hour, PollInterval: 10 * time.Millisecond,
				}, dispatch.Deps{UnitOfWork: e.uow, Discovery: e.disc, Publisher: broker, Clock: e.clock, Logger: e.logger(), Observer: obs})
				require.NoError(t, err)
				warmUp(t, e, d)
				ids := e.appendEvents(t, ws, 4)
				runInBackground(t, d)

				synctest.Wait() // both batches claimed, the second waiting for the first
				for i, id := range ids {
					require.Equal(t, model.OutboxDispatching, e.event(t, ws, id).Status, "event %d", i)
				}
				close(broker.claimed)
				require.Eventually(t, func() bool {
					if d.Paused() != nil {
						return true
					}
					for _, id := range ids {
						if e.event(t, ws, id).Status != model.OutboxDispatched {
							return false
						}
					}
					return true
				}, 30*time.Second, time.Millisecond)

				assert.NoError(t, d.Paused(), "the breaker opened")
				broker.mu.Lock()
				assert.Equal(t, tc.publishes, broker.calls, "publishes of the workspace")
				broker.mu.Unlock()
				obs.mu.Lock()
				assert.NotContains(t, obs.brokerUp, false)
				assert.Zero(t, obs.publishFailed)
				obs.mu.Unlock()
				for i, id := range ids {
					ev := e.event(t, ws, id)
					assert.Equal(t, model.OutboxDispatched, ev.Status, "event %d", i)
					assert.Zero(t, ev.AttemptCount, "event %d", i)
					assert.Empty(t, ev.LastError, "event %d", i)
				}
			})
		})
	}
}
