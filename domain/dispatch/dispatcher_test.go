package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/mocks"
	"github.com/oncehq/once/ports"
)

// Committed events are published once each, with the event id as the
// message id, then marked dispatched; the next round finds nothing.
func TestCommittedEventsArePublishedOnceWithTheEventIDAsMessageID(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	ids := e.appendEvents(t, ws, 3)

	pub := mocks.NewPublisher(t)
	pub.EXPECT().Publish(mock.Anything, mock.MatchedBy(func(msgs []ports.Message) bool {
		if len(msgs) != len(ids) {
			return false
		}
		for i, m := range msgs {
			if m.ID != ids[i] || m.WorkspaceID != ws || m.Type != "test.event" ||
				string(m.Payload) != `{"n":`+string(rune('0'+i))+`}` || m.Traceparent == "" {
				return false
			}
		}
		return true
	})).Return(nil).Once()

	d := e.dispatcher(t, dispatch.Config{}, pub)
	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{Published: 3}, res)
	for _, id := range ids {
		ev := e.event(t, ws, id)
		assert.Equal(t, model.OutboxDispatched, ev.Status)
		assert.Equal(t, e.clock.Now(), ev.DispatchedAt.UTC())
	}

	res, err = d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{}, res)
}

// A failed publish returns the event to pending with a backoff and a first
// attempt counted; once due again it is published.
func TestPublishFailureIsReleasedWithBackoffThenSucceeds(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	id := e.appendEvents(t, ws, 1)[0]
	pub := &recorder{}
	pub.setFail(func([]ports.Message) error { return errors.New("broker unreachable") })
	d := e.dispatcher(t, dispatch.Config{BackoffBase: time.Second, BackoffMax: time.Minute}, pub)

	failedAt := e.clock.Now()
	res, err := d.RunOnce(context.Background())
	require.NoError(t, err, "a publish failure is handled, not a round error")
	assert.Equal(t, dispatch.Result{Failed: 1}, res)
	ev := e.event(t, ws, id)
	assert.Equal(t, model.OutboxPending, ev.Status)
	assert.Equal(t, 1, ev.AttemptCount)
	assert.Equal(t, "broker unreachable", ev.LastError)
	assert.False(t, ev.NextAttemptAt.Before(failedAt))
	assert.False(t, ev.NextAttemptAt.After(failedAt.Add(time.Second)), "first backoff is at most BackoffBase")

	pub.setFail(nil)
	e.clock.Advance(time.Second + time.Millisecond)
	res, err = d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{Published: 1}, res)
	assert.Equal(t, model.OutboxDispatched, e.event(t, ws, id).Status)
	assert.Equal(t, map[uuid.UUID]int{id: 1}, pub.countByID())
}

// An event that never gets through is parked after MaxAttempts with a
// sanitized error, and operators can list and re-drive it.
func TestAlwaysFailingEventIsDeadLetteredWithASanitizedError(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	id := e.appendEvents(t, ws, 1)[0]
	pub := &recorder{}
	pub.setFail(func([]ports.Message) error { return errors.New("amqp refused: token=abc") })
	d := e.dispatcher(t, dispatch.Config{MaxAttempts: 3, BackoffMax: time.Minute}, pub)

	var total dispatch.Result
	for range 5 {
		res, err := d.RunOnce(context.Background())
		require.NoError(t, err)
		total.Published += res.Published
		total.Failed += res.Failed
		total.DeadLettered += res.DeadLettered
		e.clock.Advance(time.Minute + time.Second)
	}
	assert.Equal(t, dispatch.Result{Failed: 2, DeadLettered: 1}, total)
	ev := e.event(t, ws, id)
	assert.Equal(t, model.OutboxDeadLetter, ev.Status)
	assert.Equal(t, 3, ev.AttemptCount)
	assert.NotContains(t, ev.LastError, "abc")
	assert.Contains(t, ev.LastError, "token=[redacted]")
	assert.NotContains(t, e.logs.String(), "token=abc")

	admin := dispatch.NewAdmin(e.uow, e.clock, nil, nil)
	dead, err := admin.ListDeadLetters(context.Background(), ws, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, id, dead[0].ID)

	moved, err := admin.Redrive(context.Background(), ws, []uuid.UUID{id})
	require.NoError(t, err)
	assert.Equal(t, 1, moved)
	ev = e.event(t, ws, id)
	assert.Equal(t, model.OutboxPending, ev.Status)
	assert.Equal(t, 0, ev.AttemptCount)

	pub.setFail(nil)
	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{Published: 1}, res)
}

// One busy workspace cannot starve the others: a round takes at most a
// batch from each.
func TestABusyWorkspaceDoesNotStarveTheOthers(t *testing.T) {
	e := newEnv(t)
	busy, quiet := uuid.New(), uuid.New()
	e.appendEvents(t, busy, 1000)
	quietIDs := e.appendEvents(t, quiet, 5)
	pub := &recorder{}
	d := e.dispatcher(t, dispatch.Config{Batch: 100}, pub)

	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 105, res.Published)
	perWS := pub.countByWorkspace()
	assert.Equal(t, 5, perWS[quiet])
	assert.Equal(t, 100, perWS[busy])
	for _, id := range quietIDs {
		assert.Equal(t, model.OutboxDispatched, e.event(t, quiet, id).Status)
	}
}

// Two instances dispatching the same store at once never publish an event
// twice while their leases hold, and together deliver everything.
func TestConcurrentDispatchersNeverPublishAnEventTwice(t *testing.T) {
	e := newEnv(t)
	var all []uuid.UUID
	for range 4 {
		all = append(all, e.appendEvents(t, uuid.New(), 250)...)
	}
	pub := &recorder{}
	var wg sync.WaitGroup
	for _, owner := range []string{"dispatcher-a", "dispatcher-b"} {
		d := e.dispatcher(t, dispatch.Config{Owner: owner, Batch: 20}, pub)
		wg.Go(func() {
			for range 1000 {
				res, err := d.RunOnce(context.Background())
				assert.NoError(t, err)
				if res.Published == 0 {
					return
				}
			}
		})
	}
	wg.Wait()

	// Whatever one instance skipped because the other held it is due for a
	// last sweep.
	d := e.dispatcher(t, dispatch.Config{Owner: "sweeper"}, pub)
	for {
		res, err := d.RunOnce(context.Background())
		require.NoError(t, err)
		if res.Published == 0 {
			break
		}
	}
	counts := pub.countByID()
	assert.Len(t, counts, len(all))
	for _, id := range all {
		assert.Equal(t, 1, counts[id], "event %s", id)
	}
}

// When the lease ran out during a slow publish and another instance took
// the events over, the first instance's mark changes nothing and is not an
// error: the events are the new owner's, delivered at least once.
func TestAStaleMarkChangesNothing(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	id := e.appendEvents(t, ws, 1)[0]
	lease := 30 * time.Second

	pub := &recorder{}
	pub.setFail(func([]ports.Message) error {
		// The publish outlives the lease; instance b claims the event.
		e.clock.Advance(lease + time.Second)
		return nil
	})
	slow := e.dispatcher(t, dispatch.Config{Owner: "a", Lease: lease}, &takeover{recorder: pub, e: e, ws: ws, lease: lease})

	res, err := slow.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, res.Published)
	ev := e.event(t, ws, id)
	assert.Equal(t, model.OutboxDispatching, ev.Status, "a's mark must not touch b's claim")
	assert.Equal(t, "b", ev.LockedBy)
	assert.Contains(t, e.logs.String(), "lease taken over")

	// b finishes normally.
	var marked int
	require.NoError(t, e.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		marked, err = tx.OutboxDispatch().MarkDispatched(ctx, "b", []uuid.UUID{id}, e.clock.Now())
		return err
	}))
	assert.Equal(t, 1, marked)
}

// A failed publish after a takeover does not release or count an attempt
// against the new owner's claim.
func TestAStaleReleaseChangesNothing(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	id := e.appendEvents(t, ws, 1)[0]
	lease := 30 * time.Second
	pub := &recorder{}
	pub.setFail(func([]ports.Message) error {
		e.clock.Advance(lease + time.Second)
		return errors.New("broker timeout")
	})
	slow := e.dispatcher(t, dispatch.Config{Owner: "a", Lease: lease}, &takeover{recorder: pub, e: e, ws: ws, lease: lease})

	res, err := slow.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{}, res)
	ev := e.event(t, ws, id)
	assert.Equal(t, model.OutboxDispatching, ev.Status)
	assert.Equal(t, "b", ev.LockedBy)
	assert.Equal(t, 1, ev.AttemptCount, "b's takeover counts; a's stale release does not")
}

// takeover is a Publisher that, while publishing for one instance, lets the
// clock pass the lease (through the recorder's fail hook) and has instance
// "b" claim the events, as a second Dispatcher would.
type takeover struct {
	*recorder
	e     *env
	ws    uuid.UUID
	lease time.Duration
}

func (p *takeover) Publish(ctx context.Context, msgs ...ports.Message) error {
	err := p.recorder.Publish(ctx, msgs...)
	claimErr := p.e.uow.Transact(context.Background(), p.ws, func(ctx context.Context, tx ports.Tx) error {
		claimed, err := tx.OutboxDispatch().ClaimDue(ctx, "b", p.e.clock.Now(), p.lease, 100, 10)
		if err == nil && len(claimed.Events)+len(claimed.TakenOver) != len(msgs) {
			err = errors.New("b did not take the events over")
		}
		return err
	})
	if claimErr != nil {
		panic(claimErr)
	}
	return err
}

// Workspaces take turns at being served first.
func TestRoundsRotateTheFirstWorkspace(t *testing.T) {
	e := newEnv(t)
	a, b := uuid.MustParse("00000000-0000-0000-0000-00000000000a"), uuid.MustParse("00000000-0000-0000-0000-00000000000b")
	e.appendEvents(t, a, 10)
	e.appendEvents(t, b, 10)
	pub := &recorder{}
	// One batch at a time: with more, the workspaces of a round publish
	// in any order.
	d := e.dispatcher(t, dispatch.Config{Batch: 1, Concurrency: 1}, pub)
	var firsts []uuid.UUID
	for range 4 {
		before := len(pub.accepted)
		_, err := d.RunOnce(context.Background())
		require.NoError(t, err)
		firsts = append(firsts, pub.accepted[before].WorkspaceID)
	}
	assert.Equal(t, []uuid.UUID{a, b, a, b}, firsts)
}

func TestConfigIsChecked(t *testing.T) {
	e := newEnv(t)
	deps := dispatch.Deps{UnitOfWork: e.uow, Discovery: e.disc, Publisher: &recorder{}, Clock: e.clock}
	_, err := dispatch.New(dispatch.Config{}, deps)
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "an owner is required")
	_, err = dispatch.New(dispatch.Config{Owner: "x", BackoffBase: time.Hour, BackoffMax: time.Minute}, deps)
	assert.True(t, domain.IsCode(err, domain.CodeValidation))
	_, err = dispatch.New(dispatch.Config{Owner: "x"}, dispatch.Deps{})
	assert.True(t, domain.IsCode(err, domain.CodeValidation))
}

// More workspaces are due than one round serves, and the busiest have the
// lowest ids: every workspace must still get its turn within a few rounds.
func TestWorkspacesBeyondOneRoundAreNotStarved(t *testing.T) {
	e := newEnv(t)
	var all []uuid.UUID
	for i := 1; i <= 5; i++ {
		ws := uuid.MustParse(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
		all = append(all, ws)
		n := 3
		if i <= 2 {
			n = 1000 // busy, and first in id order
		}
		e.appendEvents(t, ws, n)
	}
	pub := &recorder{}
	d := e.dispatcher(t, dispatch.Config{Batch: 1, WorkspacesPerRound: 2}, pub)
	for range 3 {
		_, err := d.RunOnce(context.Background())
		require.NoError(t, err)
	}
	served := pub.countByWorkspace()
	for _, ws := range all {
		assert.Positive(t, served[ws], "workspace %s was starved", ws)
	}
}
