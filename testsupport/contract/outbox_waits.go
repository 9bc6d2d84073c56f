package contract

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Durable waits (ports.Outbox.Defer): a worker parks the event of a job
// that must wait until later, and the Dispatcher publishes it again then.

func deferEvent(t *testing.T, h Harness, workspace, id uuid.UUID, until time.Time, attempts int, wait model.JobWait) bool {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (bool, error) {
		return tx.Outbox().Defer(ctx, id, until, attempts, wait)
	})
}

// requireParked asserts e is pending from until with the job's attempts
// and wait (its kind and destination, its reason the last error), its
// lock, delivery time and publish attempts cleared.
func requireParked(t *testing.T, e model.OutboxEvent, until time.Time, attempts int, wait model.JobWait) {
	t.Helper()
	requireReturned(t, e, 0, until, wait.Reason)
	require.Equal(t, attempts, e.JobAttempts)
	require.True(t, e.DispatchedAt.IsZero(), "dispatched_at = %s", e.DispatchedAt)
	require.Equal(t, wait.Kind, e.WaitKind)
	require.Equal(t, wait.For, e.WaitedFor)
	require.True(t, e.ParkedByWorker())
}

// wakeOutage wakes workspace's events parked for waitedFor's outage and
// asleep beyond from + within, from from on, spread over within, at most
// every apart.
func wakeOutage(t *testing.T, h Harness, workspace uuid.UUID, waitedFor string, from time.Time, within, every time.Duration) int {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (int, error) {
		return tx.Outbox().Wake(ctx, model.JobWaitOutage, waitedFor, from, within, every)
	})
}

func testOutboxWaits(t *testing.T, h Harness) {
	at := now()
	until := at.Add(time.Hour)
	reason := model.JobWait{Kind: model.JobWaitRetry, For: "shopify/shop-1", Reason: "shopify/shop-1 is down"}

	t.Run("a dispatched event is parked, and claimable only from until, with the job's attempts", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := claimedEvent(t, h, ws, "d1", at)
		// One failed publish first, so that the reset of attempt_count shows.
		require.True(t, release(t, h, ws, "d1", e.ID, at, "broker said no"))
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(claimDue(t, h, ws, "d1", at, 1)))
		require.Equal(t, 1, markDispatched(t, h, ws, "d1", at, e.ID))

		require.True(t, deferEvent(t, h, ws, e.ID, until, 3, reason))
		requireParked(t, mustGetEvent(t, h, ws, e.ID), until, 3, reason)

		require.Empty(t, claimDue(t, h, ws, "d2", until.Add(-time.Second), 10), "not due before until")
		got := claimDue(t, h, ws, "d2", until, 10)
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(got))
		require.Equal(t, 3, got[0].JobAttempts)
		require.Equal(t, e.Destination, got[0].Destination)
		require.Equal(t, e.OrderingKey, got[0].OrderingKey)
	})

	t.Run("a dispatching event is parked, and the Dispatcher's late mark leaves it parked", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := claimedEvent(t, h, ws, "d1", at)
		require.True(t, deferEvent(t, h, ws, e.ID, until, 0, reason))
		require.Equal(t, 1, markDispatched(t, h, ws, "d1", at, e.ID),
			"a parked event counts as settled, not as taken over")
		requireParked(t, mustGetEvent(t, h, ws, e.ID), until, 0, reason)
	})

	t.Run("an event taken over is not counted by the stale Dispatcher's mark", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := claimedEvent(t, h, ws, "d1", at)
		taken := claimEvents(t, h, ws, "d2", at.Add(2*lease), 10, maxAttempts)
		require.Len(t, taken.TakenOver, 1)
		require.Equal(t, 0, markDispatched(t, h, ws, "d1", at, e.ID))
		require.Equal(t, model.OutboxDispatching, mustGetEvent(t, h, ws, e.ID).Status)
	})

	t.Run("a relay's held event is parked, and the relay's late mark leaves it parked", func(t *testing.T) {
		if h.RelayMarks == nil {
			t.Skip("the harness has no relay marks")
		}
		ws := newWorkspace(t, h)
		e := heldEvent(t, ws, at, at.Add(5*time.Second))
		appendEvents(t, h, ws, e)
		require.True(t, deferEvent(t, h, ws, e.ID, until, 1, reason))
		require.Equal(t, 1, markRelayed(t, h, holder, at, map[uuid.UUID][]uuid.UUID{ws: {e.ID}}))
		requireParked(t, mustGetEvent(t, h, ws, e.ID), until, 1, reason)
	})

	t.Run("a pending or dead event is left alone", func(t *testing.T) {
		ws := newWorkspace(t, h)
		dead := deadLetterEvent(t, h, ws, at)
		deadBefore := mustGetEvent(t, h, ws, dead)
		pending := newEvent(t, ws, at)
		appendEvents(t, h, ws, pending)

		require.False(t, deferEvent(t, h, ws, pending.ID, until, 1, reason))
		require.False(t, deferEvent(t, h, ws, dead, until, 1, reason))
		requireSameEvent(t, pending, mustGetEvent(t, h, ws, pending.ID))
		requireSameEvent(t, deadBefore, mustGetEvent(t, h, ws, dead))
	})

	t.Run("the event of a job that ended is left as it is: a late duplicate does not bring it back", func(t *testing.T) {
		// A duplicate copy of a job's message (a broker's redelivery after
		// a worker was killed) may reach a worker after the job ended, and
		// be refused by its destination's gate there: its park must not
		// make the event pending again, to be delivered once more and shown
		// as waiting on an operation that is over.
		ws := newWorkspace(t, h)
		jobOf := func(status model.OperationStatus) (model.Operation, model.OutboxEvent) {
			op := newOperation(ws)
			op.Status = status
			createOperation(t, h, op)
			e := newEvent(t, ws, at)
			var err error
			e.Payload, err = json.Marshal(model.StoreCredentialsVerify{StoreID: e.AggregateID, CredentialVersion: 1,
				JobOperation: model.JobOperation{OperationID: op.ID}})
			require.NoError(t, err)
			e.NextAttemptAt = at
			appendEvents(t, h, ws, e)
			require.Equal(t, []uuid.UUID{e.ID}, eventIDs(claimDue(t, h, ws, "d1", at, 1)))
			return op, e
		}
		for _, status := range []model.OperationStatus{model.OperationSucceeded, model.OperationFailed, model.OperationCancelled} {
			_, dispatching := jobOf(status)
			before := mustGetEvent(t, h, ws, dispatching.ID)
			require.False(t, deferEvent(t, h, ws, dispatching.ID, until, 1, reason), "dispatching, operation %s", status)
			requireSameEvent(t, before, mustGetEvent(t, h, ws, dispatching.ID))

			_, dispatched := jobOf(status)
			require.Equal(t, 1, markDispatched(t, h, ws, "d1", at, dispatched.ID))
			before = mustGetEvent(t, h, ws, dispatched.ID)
			require.False(t, deferEvent(t, h, ws, dispatched.ID, until, 1, reason), "dispatched, operation %s", status)
			requireSameEvent(t, before, mustGetEvent(t, h, ws, dispatched.ID))
		}

		// A cancel withdrew the parked event (to the dispatched history);
		// a copy still in the broker is then refused by the gate.
		op, withdrawn := jobOf(model.OperationPending)
		require.Equal(t, 1, markDispatched(t, h, ws, "d1", at, withdrawn.ID))
		require.True(t, deferEvent(t, h, ws, withdrawn.ID, until, 0, reason))
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			op.Cancel(at)
			if err := tx.Operations().Update(ctx, op); err != nil {
				return err
			}
			found, err := tx.Outbox().Withdraw(ctx, withdrawn.ID, "cancelled", at)
			require.True(t, found)
			return err
		})
		before := mustGetEvent(t, h, ws, withdrawn.ID)
		require.Equal(t, model.OutboxDispatched, before.Status)
		require.False(t, deferEvent(t, h, ws, withdrawn.ID, until, 0, reason))
		requireSameEvent(t, before, mustGetEvent(t, h, ws, withdrawn.ID))

		// A job still pending or running is parked as any other.
		for _, status := range []model.OperationStatus{model.OperationPending, model.OperationRunning} {
			_, e := jobOf(status)
			require.True(t, deferEvent(t, h, ws, e.ID, until, 1, reason), "operation %s", status)
			requireParked(t, mustGetEvent(t, h, ws, e.ID), until, 1, reason)
		}
	})

	t.Run("another workspace's event and an unknown one are not found", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		foreign := dispatchedEvent(t, h, other, at)
		require.False(t, deferEvent(t, h, ws, foreign, until, 1, reason))
		require.False(t, deferEvent(t, h, ws, uuid.New(), until, 1, reason))
		require.Equal(t, model.OutboxDispatched, mustGetEvent(t, h, other, foreign).Status)
	})

	t.Run("wake brings forward the events parked for its kind and destination, in their order, and nothing else", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		long := model.JobWait{Kind: model.JobWaitOutage, For: "shopify", Reason: "waiting for shopify: breaker_open"}
		parkedFor := func(ws uuid.UUID, until time.Time, reason model.JobWait) uuid.UUID {
			e := claimedEvent(t, h, ws, "d1", at)
			require.True(t, deferEvent(t, h, ws, e.ID, until, 0, reason))
			return e.ID
		}
		second := parkedFor(ws, at.Add(20*time.Minute), long)
		first := parkedFor(ws, at.Add(10*time.Minute), long)
		paced := parkedFor(ws, at.Add(10*time.Minute), reason)
		// The same destination, another kind; the same kind, another
		// destination; and the same text for people, with no kind of an
		// outage: none of them is woken.
		pacedShopify := model.JobWait{Kind: model.JobWaitPaced, For: "shopify", Reason: long.Reason}
		samePace := parkedFor(ws, at.Add(10*time.Minute), pacedShopify)
		amazon := model.JobWait{Kind: model.JobWaitOutage, For: "amazon", Reason: long.Reason}
		otherDown := parkedFor(ws, at.Add(10*time.Minute), amazon)
		due := parkedFor(ws, at.Add(-time.Second), long)
		foreign := parkedFor(other, at.Add(10*time.Minute), long)

		require.Equal(t, 2, wakeOutage(t, h, ws, "shopify", at, 0, 0))
		require.WithinDuration(t, at.Add(-time.Second), mustGetEvent(t, h, ws, due).NextAttemptAt, time.Millisecond,
			"an event already due is left as it is")
		require.Equal(t, []uuid.UUID{due, first, second}, eventIDs(claimDue(t, h, ws, "d2", at.Add(time.Millisecond), 10)),
			"the woken events are due at once, in the order they were due")
		requireParked(t, mustGetEvent(t, h, ws, paced), at.Add(10*time.Minute), 0, reason)
		requireParked(t, mustGetEvent(t, h, ws, samePace), at.Add(10*time.Minute), 0, pacedShopify)
		requireParked(t, mustGetEvent(t, h, ws, otherDown), at.Add(10*time.Minute), 0, amazon)
		requireParked(t, mustGetEvent(t, h, other, foreign), at.Add(10*time.Minute), 0, long)
		require.Zero(t, wakeOutage(t, h, ws, "", at, 0, 0), "an empty destination wakes nothing")
	})

	// parkedLong parks n of ws's events for amazon's outage, an hour and
	// i minutes from at (claimed an hour before at, when nothing woken
	// is due yet).
	parkedLong := func(t *testing.T, ws uuid.UUID, n int) []uuid.UUID {
		long := model.JobWait{Kind: model.JobWaitOutage, For: "amazon", Reason: "waiting for amazon: breaker_open"}
		var ids []uuid.UUID
		for i := range n {
			e := claimedEvent(t, h, ws, "d1", at.Add(-time.Hour))
			require.True(t, deferEvent(t, h, ws, e.ID, at.Add(time.Hour+time.Duration(i)*time.Minute), 0, long))
			ids = append(ids, e.ID)
		}
		return ids
	}
	requireDue := func(t *testing.T, ws uuid.UUID, ids []uuid.UUID, first time.Time, every time.Duration) {
		t.Helper()
		for i, id := range ids {
			require.WithinDuration(t, first.Add(time.Duration(i)*every), mustGetEvent(t, h, ws, id).NextAttemptAt, time.Millisecond, "event %d", i)
		}
	}

	t.Run("wake spreads the woken events within, by how many it moves, at most every apart", func(t *testing.T) {
		ws := newWorkspace(t, h)
		ids := parkedLong(t, ws, 4)
		// Four in two seconds: half a second apart, however many of them
		// this worker parked (a fleet's workers each park some).
		require.Equal(t, 4, wakeOutage(t, h, ws, "amazon", at, 2*time.Second, time.Hour))
		requireDue(t, ws, ids, at, 500*time.Millisecond)

		ws = newWorkspace(t, h)
		ids = parkedLong(t, ws, 3)
		require.Equal(t, 3, wakeOutage(t, h, ws, "amazon", at, time.Minute, time.Second))
		requireDue(t, ws, ids, at, time.Second)
	})

	t.Run("a wake repeated moves only what is still asleep beyond its spread", func(t *testing.T) {
		ws := newWorkspace(t, h)
		within := 30 * time.Second
		ids := parkedLong(t, ws, 3)
		require.Equal(t, 3, wakeOutage(t, h, ws, "amazon", at, within, time.Hour))
		requireDue(t, ws, ids, at, 10*time.Second)
		require.Zero(t, wakeOutage(t, h, ws, "amazon", at.Add(time.Second), within, time.Hour),
			"the events the first brought forward are due within the window: not moved again")
		requireDue(t, ws, ids, at, 10*time.Second)

		// One parked since (its park committed after the first wake) is
		// moved; the others are left as they are.
		later := parkedLong(t, ws, 1)
		require.Equal(t, 1, wakeOutage(t, h, ws, "amazon", at.Add(2*time.Second), within, time.Hour))
		requireDue(t, ws, later, at.Add(2*time.Second), 0)
		requireDue(t, ws, ids, at, 10*time.Second)

		// One parked for less than the window comes back at its time.
		soon := claimedEvent(t, h, ws, "d1", at.Add(-time.Hour))
		long := model.JobWait{Kind: model.JobWaitOutage, For: "amazon", Reason: "waiting for amazon: breaker_open"}
		require.True(t, deferEvent(t, h, ws, soon.ID, at.Add(20*time.Second), 0, long))
		require.Zero(t, wakeOutage(t, h, ws, "amazon", at.Add(3*time.Second), within, time.Hour))
		requireDue(t, ws, []uuid.UUID{soon.ID}, at.Add(20*time.Second), 0)
	})

	t.Run("negative job attempts are refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		id := dispatchedEvent(t, h, ws, at)
		_, err := query(t, h, ws, func(ctx context.Context, tx ports.Tx) (bool, error) {
			return tx.Outbox().Defer(ctx, id, until, -1, reason)
		})
		requireCode(t, err, domain.CodeValidation)
		require.Equal(t, model.OutboxDispatched, mustGetEvent(t, h, ws, id).Status)
	})

	t.Run("a wait of no known kind is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		id := dispatchedEvent(t, h, ws, at)
		for _, kind := range []model.JobWaitKind{"", "waiting for shopify"} {
			_, err := query(t, h, ws, func(ctx context.Context, tx ports.Tx) (bool, error) {
				return tx.Outbox().Defer(ctx, id, until, 0, model.JobWait{Kind: kind, Reason: "down"})
			})
			requireCode(t, err, domain.CodeValidation)
		}
		require.Equal(t, model.OutboxDispatched, mustGetEvent(t, h, ws, id).Status)
	})

	t.Run("a later failure, give-up or claim ends the wait: the event is no longer parked", func(t *testing.T) {
		ws := newWorkspace(t, h)
		parkedThen := func(claimAt time.Time) model.OutboxEvent {
			e := claimedEvent(t, h, ws, "d1", claimAt)
			require.True(t, deferEvent(t, h, ws, e.ID, claimAt.Add(time.Minute), 0, reason))
			return e
		}
		// Claimed again and released by a Dispatcher with its own error.
		released := parkedThen(at)
		require.Equal(t, []uuid.UUID{released.ID}, eventIDs(claimDue(t, h, ws, "d2", at.Add(time.Minute), 10)))
		got := mustGetEvent(t, h, ws, released.ID)
		require.Equal(t, reason.Kind, got.WaitKind, "published again, the event still says what its job waited for")
		require.True(t, release(t, h, ws, "d2", released.ID, at.Add(time.Hour), "broker said no"))
		got = mustGetEvent(t, h, ws, released.ID)
		require.False(t, got.ParkedByWorker())
		require.Empty(t, got.WaitKind)
		require.Empty(t, got.WaitedFor)

		// Given up on by its worker, then redriven by an operator.
		ws = newWorkspace(t, h)
		given := parkedThen(at)
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			_, err := tx.Outbox().DeadLetterJob(ctx, given.ID, 3, model.JobFailure(3, "boom"))
			return err
		})
		require.Equal(t, 1, redrive(t, h, ws, []uuid.UUID{given.ID}, at.Add(time.Hour)))
		got = mustGetEvent(t, h, ws, given.ID)
		require.Equal(t, model.OutboxPending, got.Status)
		require.False(t, got.ParkedByWorker())
		require.Empty(t, got.WaitKind)
		require.Empty(t, listParked(t, h, ws, 10))
	})
}

func listParked(t *testing.T, h Harness, workspace uuid.UUID, limit int) []model.OutboxEvent {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) ([]model.OutboxEvent, error) {
		return tx.Outbox().ListParked(ctx, limit)
	})
}

// Operators list the parked events (ListParked) to see which jobs wait,
// for which destination.
func testOutboxParkedList(t *testing.T, h Harness) {
	at := now()
	reason := model.JobWait{Kind: model.JobWaitOutage, For: "shopify", Reason: "shopify/shop-1: breaker open"}

	t.Run("parked events are listed soonest due first, and nothing else", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		later := claimedEvent(t, h, ws, "d1", at)
		require.True(t, deferEvent(t, h, ws, later.ID, at.Add(2*time.Hour), 1, reason))
		sooner := claimedEvent(t, h, ws, "d1", at)
		require.True(t, deferEvent(t, h, ws, sooner.ID, at.Add(time.Hour), 0, reason))
		// Neither a pending event the Dispatcher released, nor one never
		// tried, nor a dead letter, nor another workspace's parked event.
		released := claimedEvent(t, h, ws, "d1", at)
		require.True(t, release(t, h, ws, "d1", released.ID, at.Add(time.Hour), "broker said no"))
		// Nor one whose last error only reads like a worker's wait: the
		// text is for people, the kind says what is parked.
		lookalike := claimedEvent(t, h, ws, "d1", at)
		require.True(t, release(t, h, ws, "d1", lookalike.ID, at.Add(time.Hour), "job waits: waiting for shopify: breaker_open"))
		postponed := claimedEvent(t, h, ws, "d1", at)
		require.Equal(t, 1, postpone(t, h, ws, "d1", at.Add(time.Hour), "job waits: throttled by shopify", postponed.ID))
		appendEvents(t, h, ws, newEvent(t, ws, at.Add(3*time.Hour)))
		deadLetterEvent(t, h, other, at)
		foreign := claimedEvent(t, h, other, "d1", at)
		require.True(t, deferEvent(t, h, other, foreign.ID, at.Add(time.Hour), 0, reason))

		got := listParked(t, h, ws, 10)
		require.Equal(t, []uuid.UUID{sooner.ID, later.ID}, eventIDs(got))
		requireParked(t, got[1], at.Add(2*time.Hour), 1, reason)
		require.Equal(t, later.Destination, got[1].Destination)
		require.Equal(t, model.JobWaitOutage, got[0].WaitKind, "the list says why each waits")
		require.Equal(t, "shopify", got[0].WaitedFor, "and for which destination")
		require.Equal(t, []uuid.UUID{sooner.ID}, eventIDs(listParked(t, h, ws, 1)))
		require.Empty(t, listParked(t, h, ws, 0))
		require.Equal(t, []uuid.UUID{foreign.ID}, eventIDs(listParked(t, h, other, 10)))
	})

	t.Run("a parked event claimed again is no longer listed", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := claimedEvent(t, h, ws, "d1", at)
		require.True(t, deferEvent(t, h, ws, e.ID, at.Add(time.Hour), 0, reason))
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(claimDue(t, h, ws, "d2", at.Add(time.Hour), 10)))
		require.Empty(t, listParked(t, h, ws, 10))
	})
}
