package dispatch_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
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
// the broker takes 18s of a 30s lease over each (a 20s publish window).
// When it answers the second, another Dispatcher runs a round.
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
	assert.Zero(t, otherRes.Published+otherRes.DeadLettered, "another Dispatcher took events over: %+v", otherRes)
	for i, id := range ids {
		ev := e.event(t, ws, id)
		assert.Zero(t, ev.AttemptCount, "event %d: an attempt counted for waiting (%s)", i, ev.LastError)
		assert.False(t, strings.Contains(ev.LastError, "lease expired"), "event %d: %s", i, ev.LastError)
	}
}
