package contract

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The Dispatcher's side of the outbox (ports.OutboxDispatch) and the
// cross-workspace discovery (ports.OutboxDiscovery).
//
// Time is passed in, never waited for: a lease "expires" by claiming with a
// now after it. Discovery and Stats look across every workspace, so these
// tests pick instants no other test uses (decades ago) or compare
// differences, and assume no other test writes to the harness's state at
// the same time (Run's groups run one after another).

const (
	lease       = time.Minute
	maxAttempts = 10
)

// eventDueAt returns a pending event of workspace due at due.
func eventDueAt(t *testing.T, workspace uuid.UUID, due time.Time) model.OutboxEvent {
	t.Helper()
	e := newEvent(t, workspace, due)
	e.NextAttemptAt = due
	return e
}

// claimEvents runs ClaimDue in its own transaction of workspace.
func claimEvents(t *testing.T, h Harness, workspace uuid.UUID, owner string, at time.Time, limit, maxAttempts int) ports.Claim {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (ports.Claim, error) {
		return tx.OutboxDispatch().ClaimDue(ctx, owner, at, lease, limit, maxAttempts)
	})
}

// claimDue claims and returns every event claimed, pending ones first.
func claimDue(t *testing.T, h Harness, workspace uuid.UUID, owner string, at time.Time, limit int) []model.OutboxEvent {
	t.Helper()
	return claimed(claimEvents(t, h, workspace, owner, at, limit, maxAttempts))
}

func claimed(c ports.Claim) []model.OutboxEvent {
	return append(slices.Clone(c.Events), c.TakenOver...)
}

func postpone(t *testing.T, h Harness, workspace uuid.UUID, owner string, next time.Time, lastError string, ids ...uuid.UUID) int {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (int, error) {
		return tx.OutboxDispatch().Postpone(ctx, owner, ids, next, lastError)
	})
}

func markDispatched(t *testing.T, h Harness, workspace uuid.UUID, owner string, at time.Time, ids ...uuid.UUID) int {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (int, error) {
		return tx.OutboxDispatch().MarkDispatched(ctx, owner, ids, at)
	})
}

func release(t *testing.T, h Harness, workspace uuid.UUID, owner string, id uuid.UUID, next time.Time, lastError string) bool {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (bool, error) {
		return tx.OutboxDispatch().Release(ctx, owner, id, next, lastError)
	})
}

func deadLetter(t *testing.T, h Harness, workspace uuid.UUID, owner string, id uuid.UUID, lastError string) bool {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (bool, error) {
		return tx.OutboxDispatch().DeadLetter(ctx, owner, id, lastError)
	})
}

func redrive(t *testing.T, h Harness, workspace uuid.UUID, ids []uuid.UUID, at time.Time) int {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (int, error) {
		return tx.OutboxDispatch().Redrive(ctx, ids, at)
	})
}

func deleteDispatched(t *testing.T, h Harness, workspace uuid.UUID, before time.Time, limit int) int {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) (int, error) {
		return tx.OutboxDispatch().DeleteDispatchedBefore(ctx, before, limit)
	})
}

func mustGetEvent(t *testing.T, h Harness, workspace, id uuid.UUID) model.OutboxEvent {
	t.Helper()
	e, err := getEvent(t, h, workspace, id)
	require.NoError(t, err)
	return e
}

func requireSameTime(t *testing.T, want, got time.Time, what string) {
	t.Helper()
	require.Equal(t, dbTime(want), dbTime(got), what)
}

// requireClaimed asserts e shows the state a claim by owner at `at` gives.
func requireClaimed(t *testing.T, e model.OutboxEvent, owner string, at time.Time) {
	t.Helper()
	require.Equal(t, model.OutboxDispatching, e.Status)
	require.Equal(t, owner, e.LockedBy)
	requireSameTime(t, at.Add(lease), e.LockedUntil, "locked_until")
}

// requireReturned asserts e is pending again, without a lease, after
// attempts attempts, due at next, the last error lastError.
func requireReturned(t *testing.T, e model.OutboxEvent, attempts int, next time.Time, lastError string) {
	t.Helper()
	require.Equal(t, model.OutboxPending, e.Status)
	require.Equal(t, attempts, e.AttemptCount)
	requireSameTime(t, next, e.NextAttemptAt, "next_attempt_at")
	require.Equal(t, lastError, e.LastError)
	require.Empty(t, e.LockedBy)
	require.True(t, e.LockedUntil.IsZero(), "locked_until = %s", e.LockedUntil)
}

// claimedEvent appends an event due at `at` to workspace and claims it as
// owner at `at`.
func claimedEvent(t *testing.T, h Harness, workspace uuid.UUID, owner string, at time.Time) model.OutboxEvent {
	t.Helper()
	e := eventDueAt(t, workspace, at)
	appendEvents(t, h, workspace, e)
	require.Equal(t, []uuid.UUID{e.ID}, eventIDs(claimDue(t, h, workspace, owner, at, 1)))
	return e
}

// dispatchedEvent appends an event to workspace, claims it and marks it
// dispatched at `at`; it returns the event's id.
func dispatchedEvent(t *testing.T, h Harness, workspace uuid.UUID, at time.Time) uuid.UUID {
	t.Helper()
	e := claimedEvent(t, h, workspace, "cleaner-setup", at)
	require.Equal(t, 1, markDispatched(t, h, workspace, "cleaner-setup", at, e.ID))
	return e.ID
}

// deadLetterEvent appends an event to workspace, claims it and parks it.
func deadLetterEvent(t *testing.T, h Harness, workspace uuid.UUID, at time.Time) uuid.UUID {
	t.Helper()
	e := claimedEvent(t, h, workspace, "dlq-setup", at)
	require.True(t, deadLetter(t, h, workspace, "dlq-setup", e.ID, "boom"))
	return e.ID
}

func testOutboxDispatch(t *testing.T, h Harness) {
	t.Run("claim takes due events only, oldest first, up to limit", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		at := now()
		e3 := eventDueAt(t, ws, at.Add(-1*time.Second))
		e1 := eventDueAt(t, ws, at.Add(-3*time.Second))
		e2 := eventDueAt(t, ws, at.Add(-2*time.Second))
		future := eventDueAt(t, ws, at.Add(lease/2))
		appendEvents(t, h, ws, e3, e1)
		appendEvents(t, h, ws, future, e2)
		appendEvents(t, h, other, eventDueAt(t, other, at.Add(-time.Hour)))

		first := claimDue(t, h, ws, "d1", at, 2)
		require.Equal(t, []uuid.UUID{e1.ID, e2.ID}, eventIDs(first))
		for _, e := range first {
			requireClaimed(t, e, "d1", at)
			require.Equal(t, ws, e.WorkspaceID)
		}
		want := e1
		want.Status, want.LockedBy, want.LockedUntil = model.OutboxDispatching, "d1", at.Add(lease)
		requireSameEvent(t, want, first[0])
		requireSameEvent(t, want, mustGetEvent(t, h, ws, e1.ID))

		second := claimDue(t, h, ws, "d2", at, 10)
		require.Equal(t, []uuid.UUID{e3.ID}, eventIDs(second))
		requireClaimed(t, second[0], "d2", at)

		// Nothing else is due: the future event waits, the others are leased.
		require.Empty(t, claimDue(t, h, ws, "d3", at, 10))
		require.Equal(t, model.OutboxPending, mustGetEvent(t, h, ws, future.ID).Status)

		// The future event once its time has come (leases still running).
		require.Equal(t, []uuid.UUID{future.ID}, eventIDs(claimDue(t, h, ws, "d3", at.Add(lease/2), 10)))

		require.Empty(t, claimDue(t, h, ws, "d1", at, 0), "limit 0 claims nothing")
	})

	t.Run("a claimed event is skipped by others until its lease expires", func(t *testing.T) {
		ws := newWorkspace(t, h)
		at := now()
		e := eventDueAt(t, ws, at.Add(-time.Second))
		appendEvents(t, h, ws, e)

		// While the claiming transaction is open, a concurrent claim skips the
		// event at once (no waiting on the claimer), whatever its `now`.
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			c, err := tx.OutboxDispatch().ClaimDue(ctx, "d1", at, lease, 10, maxAttempts)
			require.NoError(t, err)
			require.Equal(t, []uuid.UUID{e.ID}, eventIDs(c.Events))
			err = within(t, 10*time.Second, "a concurrent claim", func() error {
				for _, when := range []time.Time{at, at.Add(2 * lease)} {
					if got := claimDue(t, h, ws, "d2", when, 10); len(got) != 0 {
						t.Errorf("concurrent claim at %s got %v", when, eventIDs(got))
					}
				}
				return nil
			})
			return err
		})

		// Committed: not claimable while the lease runs, claimable after.
		require.Empty(t, claimDue(t, h, ws, "d2", at.Add(lease-time.Second), 10))
		later := at.Add(lease + time.Second)
		taken := claimEvents(t, h, ws, "d2", later, 10, maxAttempts)
		require.Empty(t, taken.Events)
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(taken.TakenOver))
		requireClaimed(t, taken.TakenOver[0], "d2", later)
		require.Equal(t, 1, taken.TakenOver[0].AttemptCount, "a takeover counts an attempt")

		// The first owner is fenced out now; the new one is not.
		require.Equal(t, 0, markDispatched(t, h, ws, "d1", later, e.ID))
		require.False(t, release(t, h, ws, "d1", e.ID, later, "stale"))
		require.False(t, deadLetter(t, h, ws, "d1", e.ID, "stale"))
		requireClaimed(t, mustGetEvent(t, h, ws, e.ID), "d2", later)
		require.Equal(t, 1, markDispatched(t, h, ws, "d2", later, e.ID))
	})

	t.Run("a rolled-back claim leaves the event claimable", func(t *testing.T) {
		ws := newWorkspace(t, h)
		at := now()
		e := eventDueAt(t, ws, at)
		appendEvents(t, h, ws, e)
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			c, err := tx.OutboxDispatch().ClaimDue(ctx, "d1", at, lease, 10, maxAttempts)
			require.NoError(t, err)
			require.Len(t, c.Events, 1)
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		require.Equal(t, model.OutboxPending, mustGetEvent(t, h, ws, e.ID).Status)
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(claimDue(t, h, ws, "d2", at, 10)))
	})

	t.Run("mark dispatched is fenced by owner", func(t *testing.T) {
		ws := newWorkspace(t, h)
		at := now()
		e1, e2, pending := eventDueAt(t, ws, at), eventDueAt(t, ws, at.Add(time.Microsecond)), eventDueAt(t, ws, at.Add(time.Hour))
		appendEvents(t, h, ws, e1, e2, pending)
		require.Len(t, claimDue(t, h, ws, "d1", at.Add(time.Second), 10), 2)

		require.Equal(t, 0, markDispatched(t, h, ws, "someone-else", at, e1.ID, e2.ID))
		requireClaimed(t, mustGetEvent(t, h, ws, e1.ID), "d1", at.Add(time.Second))

		sentAt := at.Add(2 * time.Second)
		require.Equal(t, 2, markDispatched(t, h, ws, "d1", sentAt, e1.ID, e2.ID, pending.ID, uuid.New()))
		for _, id := range []uuid.UUID{e1.ID, e2.ID} {
			got := mustGetEvent(t, h, ws, id)
			require.Equal(t, model.OutboxDispatched, got.Status)
			requireSameTime(t, sentAt, got.DispatchedAt, "dispatched_at")
			require.Equal(t, 0, got.AttemptCount)
		}
		require.Equal(t, model.OutboxPending, mustGetEvent(t, h, ws, pending.ID).Status)
		// Marking again changes nothing, and a dispatched event is never due.
		require.Equal(t, 0, markDispatched(t, h, ws, "d1", sentAt, e1.ID))
		require.Equal(t, []uuid.UUID{pending.ID}, eventIDs(claimDue(t, h, ws, "d2", at.Add(2*time.Hour), 10)))
		require.Equal(t, 0, markDispatched(t, h, ws, "d1", sentAt))
	})

	t.Run("release counts the attempt and backs off", func(t *testing.T) {
		ws, at := newWorkspace(t, h), now()
		e := claimedEvent(t, h, ws, "d1", at)

		next := at.Add(30 * time.Second)
		require.False(t, release(t, h, ws, "d2", e.ID, next, "not mine"))
		require.True(t, release(t, h, ws, "d1", e.ID, next, "queue unavailable"))
		got := mustGetEvent(t, h, ws, e.ID)
		requireReturned(t, got, 1, next, "queue unavailable")
		// Released once: a second release by the same owner is fenced.
		require.False(t, release(t, h, ws, "d1", e.ID, next, "again"))

		require.Empty(t, claimDue(t, h, ws, "d1", next.Add(-time.Second), 10))
		again := claimDue(t, h, ws, "d1", next, 10)
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(again))
		require.Equal(t, 1, again[0].AttemptCount)
		require.True(t, release(t, h, ws, "d1", e.ID, next.Add(time.Minute), "still unavailable"))
		require.Equal(t, 2, mustGetEvent(t, h, ws, e.ID).AttemptCount)
	})

	t.Run("a takeover counts an attempt, one expired lease per claim, oldest first", func(t *testing.T) {
		ws := newWorkspace(t, h)
		at := now()
		// Three events claimed by d1 a second apart (three leases), and a
		// pending one due when the leases have run out.
		var held []model.OutboxEvent
		for i := range 3 {
			e := eventDueAt(t, ws, at.Add(time.Duration(i)*time.Second))
			appendEvents(t, h, ws, e)
			require.Equal(t, []uuid.UUID{e.ID}, eventIDs(claimDue(t, h, ws, "d1", at.Add(time.Duration(i)*time.Second), 1)))
			held = append(held, e)
		}
		later := at.Add(2*time.Second + lease + time.Second)
		pending := eventDueAt(t, ws, later.Add(-time.Millisecond))
		appendEvents(t, h, ws, pending)

		first := claimEvents(t, h, ws, "d2", later, 10, maxAttempts)
		require.Equal(t, []uuid.UUID{pending.ID}, eventIDs(first.Events))
		require.Equal(t, 0, first.Events[0].AttemptCount)
		require.Equal(t, []uuid.UUID{held[0].ID}, eventIDs(first.TakenOver), "the oldest lease, and only one")
		require.Empty(t, first.DeadLettered)
		got := mustGetEvent(t, h, ws, held[0].ID)
		requireClaimed(t, got, "d2", later)
		require.Equal(t, 1, got.AttemptCount)
		require.Equal(t, model.LeaseExpiredError(1), got.LastError)
		require.Equal(t, "lease expired on attempt 1: the dispatcher holding it crashed or hung", got.LastError)
		for _, e := range held[1:] {
			require.Equal(t, "d1", mustGetEvent(t, h, ws, e.ID).LockedBy, "the other expired leases wait for the next claims")
		}

		for _, e := range held[1:] {
			c := claimEvents(t, h, ws, "d2", later, 10, maxAttempts)
			require.Empty(t, c.Events)
			require.Equal(t, []uuid.UUID{e.ID}, eventIDs(c.TakenOver))
			require.Equal(t, 1, c.TakenOver[0].AttemptCount)
		}
		require.Equal(t, ports.Claim{}, claimEvents(t, h, ws, "d2", later, 10, maxAttempts))

		// The attempt stays counted when the new owner delivers it.
		require.Equal(t, 1, markDispatched(t, h, ws, "d2", later, held[0].ID))
		require.Equal(t, 1, mustGetEvent(t, h, ws, held[0].ID).AttemptCount)
	})

	t.Run("an event whose lease expires once too often is dead-lettered, not claimed", func(t *testing.T) {
		ws := newWorkspace(t, h)
		at := now()
		poison, other := eventDueAt(t, ws, at), eventDueAt(t, ws, at.Add(time.Millisecond))
		appendEvents(t, h, ws, poison)
		const max = 3
		require.Len(t, claimEvents(t, h, ws, "d0", at, 1, max).Events, 1)
		// Each Dispatcher that takes it over dies with it; the lease runs out.
		when := at
		for attempt := 1; attempt < max; attempt++ {
			when = when.Add(lease + time.Second)
			c := claimEvents(t, h, ws, fmt.Sprintf("d%d", attempt), when, 10, max)
			require.Equal(t, []uuid.UUID{poison.ID}, eventIDs(c.TakenOver))
			require.Equal(t, attempt, c.TakenOver[0].AttemptCount)
		}
		appendEvents(t, h, ws, other)
		when = when.Add(lease + time.Second)
		last := claimEvents(t, h, ws, "d-last", when, 10, max)
		require.Equal(t, []uuid.UUID{poison.ID}, last.DeadLettered)
		require.Empty(t, last.TakenOver)
		require.Equal(t, []uuid.UUID{other.ID}, eventIDs(last.Events), "the other events are claimed as usual")

		got := mustGetEvent(t, h, ws, poison.ID)
		require.Equal(t, model.OutboxDeadLetter, got.Status)
		require.Equal(t, max, got.AttemptCount)
		require.Equal(t, model.LeaseExpiredError(max), got.LastError)
		require.Empty(t, got.LockedBy)
		require.True(t, got.LockedUntil.IsZero(), "locked_until = %s", got.LockedUntil)
		require.Equal(t, []uuid.UUID{poison.ID}, eventIDs(listEvents(t, h, ws, model.OutboxDeadLetter, 10)))
		require.Equal(t, 1, markDispatched(t, h, ws, "d-last", when, other.ID))
		require.Equal(t, ports.Claim{}, claimEvents(t, h, ws, "d-after", when.AddDate(1, 0, 0), 10, max), "a dead letter is never due")

		require.Equal(t, 1, redrive(t, h, ws, []uuid.UUID{poison.ID}, when))
		require.Equal(t, 0, mustGetEvent(t, h, ws, poison.ID).AttemptCount)
	})

	t.Run("postpone returns events without counting an attempt", func(t *testing.T) {
		ws := newWorkspace(t, h)
		at := now()
		e1, e2 := eventDueAt(t, ws, at), eventDueAt(t, ws, at.Add(-time.Microsecond))
		appendEvents(t, h, ws, e1, e2)
		require.Len(t, claimDue(t, h, ws, "d1", at, 10), 2)

		next := at.Add(time.Second)
		require.Equal(t, 0, postpone(t, h, ws, "d2", next, "not mine", e1.ID, e2.ID))
		require.Equal(t, 2, postpone(t, h, ws, "d1", next, "broker unreachable", e1.ID, e2.ID, uuid.New()))
		for _, id := range []uuid.UUID{e1.ID, e2.ID} {
			got := mustGetEvent(t, h, ws, id)
			requireReturned(t, got, 0, next, "broker unreachable")
		}
		require.Equal(t, 0, postpone(t, h, ws, "d1", next, "again", e1.ID), "postponed once: fenced")
		require.Equal(t, 0, postpone(t, h, ws, "d1", next, "none"))

		require.Empty(t, claimDue(t, h, ws, "d1", next.Add(-time.Millisecond), 10))
		require.Len(t, claimDue(t, h, ws, "d1", next, 10), 2)
		require.Equal(t, 1, postpone(t, h, ws, "d1", next, "", e1.ID))
		require.Equal(t, "broker unreachable", mustGetEvent(t, h, ws, e1.ID).LastError, "an empty error keeps the last one")
	})

	t.Run("dead letter parks the event", func(t *testing.T) {
		ws, at := newWorkspace(t, h), now()
		e := claimedEvent(t, h, ws, "d1", at)
		require.False(t, deadLetter(t, h, ws, "d2", e.ID, "not mine"))
		require.True(t, deadLetter(t, h, ws, "d1", e.ID, "payload rejected by the queue"))
		got := mustGetEvent(t, h, ws, e.ID)
		require.Equal(t, model.OutboxDeadLetter, got.Status)
		require.Equal(t, 1, got.AttemptCount)
		require.Equal(t, "payload rejected by the queue", got.LastError)
		require.False(t, deadLetter(t, h, ws, "d1", e.ID, "again"))
		require.Empty(t, claimDue(t, h, ws, "d1", at.AddDate(1, 0, 0), 10), "a dead letter is never due")
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(listEvents(t, h, ws, model.OutboxDeadLetter, 10)))
	})

	t.Run("redrive moves dead letters back, and nothing else", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		at := now()
		d1, d2 := deadLetterEvent(t, h, ws, at), deadLetterEvent(t, h, ws, at)
		sent := dispatchedEvent(t, h, ws, at)
		pending := eventDueAt(t, ws, at.Add(time.Hour))
		appendEvents(t, h, ws, pending)
		otherDead := deadLetterEvent(t, h, other, at)

		redriveAt := at.Add(time.Minute)
		require.Equal(t, 1, redrive(t, h, ws, []uuid.UUID{d1, sent, pending.ID, otherDead, uuid.New()}, redriveAt))
		got := mustGetEvent(t, h, ws, d1)
		require.Equal(t, model.OutboxPending, got.Status)
		require.Equal(t, 0, got.AttemptCount)
		require.Equal(t, 0, got.JobAttempts, "the job starts over")
		requireSameTime(t, redriveAt, got.NextAttemptAt, "next_attempt_at")
		requireSameTime(t, redriveAt, got.CreatedAt, "created_at: the job's deadline starts over")
		require.Equal(t, model.OutboxDeadLetter, mustGetEvent(t, h, ws, d2).Status)
		require.Equal(t, model.OutboxDispatched, mustGetEvent(t, h, ws, sent).Status)
		requireSameEvent(t, pending, mustGetEvent(t, h, ws, pending.ID))
		require.Equal(t, model.OutboxDeadLetter, mustGetEvent(t, h, other, otherDead).Status)

		require.Equal(t, 0, redrive(t, h, ws, []uuid.UUID{}, redriveAt), "empty ids redrive none")
		require.Equal(t, 1, redrive(t, h, ws, nil, redriveAt), "nil ids redrive all of the workspace's")
		require.Equal(t, model.OutboxPending, mustGetEvent(t, h, ws, d2).Status)
		require.Equal(t, 0, mustGetEvent(t, h, ws, d2).JobAttempts, "the job starts over")
		require.Equal(t, model.OutboxDeadLetter, mustGetEvent(t, h, other, otherDead).Status)
		require.Equal(t, 0, redrive(t, h, ws, nil, redriveAt))

		require.Equal(t, sortedIDs([]uuid.UUID{d1, d2}), sortedIDs(eventIDs(claimDue(t, h, ws, "d1", redriveAt, 10))))
	})

	t.Run("delete dispatched removes old dispatched events in bounded batches", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		at := now()
		old1 := dispatchedEvent(t, h, ws, at.Add(-3*time.Hour))
		old2 := dispatchedEvent(t, h, ws, at.Add(-2*time.Hour))
		old3 := dispatchedEvent(t, h, ws, at.Add(-1*time.Hour))
		recent := dispatchedEvent(t, h, ws, at.Add(time.Hour))
		pending := eventDueAt(t, ws, at.Add(-4*time.Hour))
		appendEvents(t, h, ws, pending)
		otherOld := dispatchedEvent(t, h, other, at.Add(-3*time.Hour))

		// A rolled-back delete deletes nothing.
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			n, err := tx.OutboxDispatch().DeleteDispatchedBefore(ctx, at, 10)
			require.NoError(t, err)
			require.Equal(t, 3, n)
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)

		require.Equal(t, 2, deleteDispatched(t, h, ws, at, 2))
		for _, id := range []uuid.UUID{old1, old2} {
			_, err := getEvent(t, h, ws, id)
			requireCode(t, err, domain.CodeNotFound)
		}
		mustGetEvent(t, h, ws, old3)
		require.Equal(t, 1, deleteDispatched(t, h, ws, at, 2))
		require.Equal(t, 0, deleteDispatched(t, h, ws, at, 2))
		require.Equal(t, 0, deleteDispatched(t, h, ws, at.Add(2*time.Hour), 0), "limit 0 deletes nothing")
		mustGetEvent(t, h, ws, recent)
		mustGetEvent(t, h, ws, pending.ID)
		mustGetEvent(t, h, other, otherOld)
	})

	// Decades ago, so no other test's events are as old; each test cleans up
	// after itself by dispatching and deleting what it left due.
	t.Run("discovery finds workspaces with due events and expired leases", func(t *testing.T) {
		asOf := now().AddDate(-20, 0, 0)
		due, leased, notYet, empty := newWorkspace(t, h), newWorkspace(t, h), newWorkspace(t, h), newWorkspace(t, h)
		appendEvents(t, h, due, eventDueAt(t, due, asOf.Add(-time.Minute)), eventDueAt(t, due, asOf.Add(-2*time.Minute)))
		appendEvents(t, h, notYet, eventDueAt(t, notYet, asOf.Add(time.Minute)))
		// leased: claimed so that its lease ran out just before asOf.
		appendEvents(t, h, leased, eventDueAt(t, leased, asOf.Add(-lease-2*time.Minute)))
		require.Len(t, claimDue(t, h, leased, "d1", asOf.Add(-lease-time.Minute), 1), 1)
		t.Cleanup(func() {
			for _, ws := range []uuid.UUID{due, leased, notYet} {
				drain(t, h, ws)
			}
		})

		requireDiscovers(t, func(limit int) ([]uuid.UUID, error) {
			return h.OutboxDiscovery.WorkspacesWithDueEvents(t.Context(), asOf, uuid.Nil, limit)
		}, []uuid.UUID{due, leased}, []uuid.UUID{notYet, empty})

		// The cursor: only ids after it, in id order.
		first, second := due, leased
		if slices.Compare(second[:], first[:]) < 0 {
			first, second = second, first
		}
		ids, err := h.OutboxDiscovery.WorkspacesWithDueEvents(t.Context(), asOf, first, 10000)
		require.NoError(t, err)
		require.NotContains(t, ids, first)
		require.Contains(t, ids, second)
		require.True(t, slices.IsSortedFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) }), "id order")
		ids, err = h.OutboxDiscovery.WorkspacesWithDueEvents(t.Context(), asOf, second, 10000)
		require.NoError(t, err)
		require.NotContains(t, ids, first)
		require.NotContains(t, ids, second)
		ids, err = h.OutboxDiscovery.WorkspacesWithDueEvents(t.Context(), asOf, uuid.Nil, 0)
		require.NoError(t, err)
		require.Empty(t, ids)

		// Claimed (lease running): no longer due. Its time come: due.
		require.Len(t, claimDue(t, h, due, "d1", asOf, 10), 2)
		ids, err = h.OutboxDiscovery.WorkspacesWithDueEvents(t.Context(), asOf, uuid.Nil, 10000)
		require.NoError(t, err)
		require.NotContains(t, ids, due)
		ids, err = h.OutboxDiscovery.WorkspacesWithDueEvents(t.Context(), asOf.Add(time.Minute), uuid.Nil, 10000)
		require.NoError(t, err)
		require.Contains(t, ids, notYet)
	})

	t.Run("discovery finds workspaces with old dispatched events", func(t *testing.T) {
		asOf := now().AddDate(-20, 0, 0)
		old, recent := newWorkspace(t, h), newWorkspace(t, h)
		dispatchedEvent(t, h, old, asOf.Add(-time.Minute))
		dispatchedEvent(t, h, recent, asOf.Add(time.Minute))
		t.Cleanup(func() {
			for _, ws := range []uuid.UUID{old, recent} {
				drain(t, h, ws)
			}
		})

		dispatchedBefore := func(before time.Time) func(limit int) ([]uuid.UUID, error) {
			return func(limit int) ([]uuid.UUID, error) {
				return h.OutboxDiscovery.WorkspacesWithDispatchedBefore(t.Context(), before, limit)
			}
		}
		requireDiscovers(t, dispatchedBefore(asOf), []uuid.UUID{old}, []uuid.UUID{recent})
		requireDiscovers(t, dispatchedBefore(asOf.Add(2*time.Minute)), []uuid.UUID{old, recent}, nil)

		require.Equal(t, 1, deleteDispatched(t, h, old, asOf, 10))
		requireDiscovers(t, dispatchedBefore(asOf), nil, []uuid.UUID{old})
	})

	t.Run("stats count events per status", func(t *testing.T) {
		at := now()
		before, err := h.OutboxDiscovery.Stats(t.Context(), at)
		require.NoError(t, err)

		ws := newWorkspace(t, h)
		deadLetterEvent(t, h, ws, at.Add(-3*time.Hour))
		dispatchedEvent(t, h, ws, at.Add(-3*time.Hour))
		appendEvents(t, h, ws, eventDueAt(t, ws, at.Add(-3*time.Hour)))
		require.Len(t, claimDue(t, h, ws, "d1", at, 1), 1) // dispatching, lease running
		appendEvents(t, h, ws, eventDueAt(t, ws, at.Add(-time.Hour)), eventDueAt(t, ws, at.Add(time.Hour)))
		t.Cleanup(func() { drain(t, h, ws) })

		after, err := h.OutboxDiscovery.Stats(t.Context(), at)
		require.NoError(t, err)
		for status, want := range map[model.OutboxStatus]int64{
			model.OutboxPending: 2, model.OutboxDispatching: 1, model.OutboxDispatched: 1, model.OutboxDeadLetter: 1,
		} {
			require.Equal(t, want, after.ByStatus[status]-before.ByStatus[status], "%s events added", status)
		}
		// The pending event due an hour ago is the oldest due one of this
		// workspace (the dispatching one's lease runs); older ones elsewhere
		// can only make the age larger.
		require.GreaterOrEqual(t, after.OldestDueAge, time.Hour)
	})

	// Several Dispatchers claiming one workspace's backlog at once, each in
	// its own transactions: every event is claimed exactly once.
	t.Run("concurrent claims never share an event", func(t *testing.T) {
		const events, workers, batch = 120, 4, 7
		ws := newWorkspace(t, h)
		at := now()
		all := make([]model.OutboxEvent, events)
		for i := range all {
			all[i] = eventDueAt(t, ws, at.Add(-time.Duration(events-i)*time.Millisecond))
		}
		appendEvents(t, h, ws, all...)

		var mu sync.Mutex
		claimedBy := map[uuid.UUID]string{}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range workers {
			owner := "worker-" + string(rune('a'+w))
			wg.Go(func() {
				<-start
				for {
					var got []model.OutboxEvent
					err := h.UoW.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
						c, err := tx.OutboxDispatch().ClaimDue(ctx, owner, at, lease, batch, maxAttempts)
						got = claimed(c)
						time.Sleep(time.Millisecond) // hold the claim while others try
						return err
					})
					if err != nil {
						t.Errorf("%s: %v", owner, err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, e := range got {
						if prev, dup := claimedBy[e.ID]; dup {
							t.Errorf("event %s claimed by %s and %s", e.ID, prev, owner)
						}
						claimedBy[e.ID] = owner
					}
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		require.Len(t, claimedBy, events)
		for _, e := range listEvents(t, h, ws, "", events+1) {
			require.Equal(t, model.OutboxDispatching, e.Status)
			require.Equal(t, claimedBy[e.ID], e.LockedBy)
		}
	})
}

// drain dispatches and deletes every event of workspace, so events with odd
// times do not linger in a shared database. It runs as a cleanup, when
// t.Context() is already cancelled.
func drain(t *testing.T, h Harness, workspace uuid.UUID) {
	t.Helper()
	end := time.Now().AddDate(100, 0, 0)
	for more := true; more; {
		err := h.UoW.Transact(context.Background(), workspace, func(ctx context.Context, tx ports.Tx) error {
			d := tx.OutboxDispatch()
			c, err := d.ClaimDue(ctx, "drain", end, lease, 10000, maxAttempts)
			if err != nil {
				return err
			}
			// One expired lease per claim: go again while there are any.
			more = len(c.TakenOver)+len(c.DeadLettered) > 0
			if _, err := d.MarkDispatched(ctx, "drain", eventIDs(claimed(c)), time.Now()); err != nil {
				return err
			}
			_, err = d.DeleteDispatchedBefore(ctx, end, 10000)
			return err
		})
		require.NoError(t, err)
	}
}

// requireDiscovers asserts what a discovery across workspaces lists:
// every workspace of with and none of without, each once, and one when
// asked for one (with names at least two, so the limit is what bounds
// it).
func requireDiscovers(t *testing.T, discover func(limit int) ([]uuid.UUID, error), with, without []uuid.UUID) {
	t.Helper()
	ids, err := discover(10000)
	require.NoError(t, err)
	require.Subset(t, ids, with)
	for _, ws := range without {
		require.NotContains(t, ids, ws)
	}
	seen := map[uuid.UUID]bool{}
	for _, id := range ids {
		require.False(t, seen[id], "workspace %s listed twice", id)
		seen[id] = true
	}
	if len(with) > 1 {
		ids, err = discover(1)
		require.NoError(t, err)
		require.Len(t, ids, 1)
	}
}

func sortedIDs(ids []uuid.UUID) []uuid.UUID {
	ids = slices.Clone(ids)
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return ids
}
