package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The writer's relay (ports.OutboxRelayMarks) and how its held events meet
// the Dispatcher's claim: an event written held (pending, locked_by the
// holder, next_attempt_at a hold ahead) is nobody else's until the hold
// ends, and after that only the Dispatcher's.

const holder = "relay-contract"

// heldEvent is a pending event of workspace held by holder until `until`.
func heldEvent(t *testing.T, workspace uuid.UUID, at, until time.Time) model.OutboxEvent {
	t.Helper()
	e := newEvent(t, workspace, at)
	e.LockedBy, e.NextAttemptAt = holder, until
	return e
}

func markRelayed(t *testing.T, h Harness, who string, at time.Time, events map[uuid.UUID][]uuid.UUID) int {
	t.Helper()
	n, err := h.RelayMarks.MarkRelayed(context.Background(), who, events, at)
	require.NoError(t, err)
	return n
}

func releaseHeld(t *testing.T, h Harness, who string, next time.Time, lastError string, events map[uuid.UUID][]uuid.UUID) int {
	t.Helper()
	n, err := h.RelayMarks.ReleaseHeld(context.Background(), who, events, next, lastError)
	require.NoError(t, err)
	return n
}

func testOutboxRelay(t *testing.T, h Harness) {
	if h.RelayMarks == nil {
		t.Skip("the harness has no relay marks")
	}
	// Instants decades ago, as in the dispatch tests, so discovery sees
	// no other test's events due.
	at := time.Date(1994, 3, 1, 12, 0, 0, 0, time.UTC)
	hold := 5 * time.Second

	t.Run("a held event is written as given and is not due before its hold ends", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := heldEvent(t, ws, at, at.Add(hold))
		appendEvents(t, h, ws, e)
		got := mustGetEvent(t, h, ws, e.ID)
		require.Equal(t, model.OutboxPending, got.Status)
		require.Equal(t, holder, got.LockedBy)
		requireSameTime(t, at.Add(hold), got.NextAttemptAt, "next_attempt_at")

		require.Empty(t, claimDue(t, h, ws, "dispatcher", at.Add(hold-time.Microsecond), 10), "claimed while held")
		requireDiscovers(t, func(limit int) ([]uuid.UUID, error) {
			return h.OutboxDiscovery.WorkspacesWithDueEvents(context.Background(), at.Add(hold-time.Microsecond), uuid.Nil, limit)
		}, nil, []uuid.UUID{ws})
		requireDiscovers(t, func(limit int) ([]uuid.UUID, error) {
			return h.OutboxDiscovery.WorkspacesWithDueEvents(context.Background(), at.Add(hold), uuid.Nil, limit)
		}, []uuid.UUID{ws}, nil)

		// The hold ended: the Dispatcher claims it as any pending event,
		// no attempt counted, and the claim makes it the Dispatcher's.
		c := claimEvents(t, h, ws, "dispatcher", at.Add(hold), 10, maxAttempts)
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(c.Events))
		require.Empty(t, c.TakenOver)
		requireClaimed(t, c.Events[0], "dispatcher", at.Add(hold))
		require.Zero(t, c.Events[0].AttemptCount)

		// The writer's late mark or release changes nothing.
		evs := map[uuid.UUID][]uuid.UUID{ws: {e.ID}}
		require.Zero(t, markRelayed(t, h, holder, at, evs))
		require.Zero(t, releaseHeld(t, h, holder, at, "late", evs))
		requireClaimed(t, mustGetEvent(t, h, ws, e.ID), "dispatcher", at.Add(hold))
	})

	t.Run("MarkRelayed marks the holder's events of many workspaces in one call", func(t *testing.T) {
		ws1, ws2 := newWorkspace(t, h), newWorkspace(t, h)
		a, b := heldEvent(t, ws1, at, at.Add(hold)), heldEvent(t, ws1, at, at.Add(hold))
		c := heldEvent(t, ws2, at, at.Add(hold))
		other := heldEvent(t, ws2, at, at.Add(hold))
		other.LockedBy = "another-writer"
		plain := eventDueAt(t, ws2, at.Add(hold))
		appendEvents(t, h, ws1, a, b)
		appendEvents(t, h, ws2, c, other, plain)

		evs := map[uuid.UUID][]uuid.UUID{ws1: {a.ID, b.ID}, ws2: {c.ID, other.ID, plain.ID}}
		require.Zero(t, markRelayed(t, h, "", at, evs), "an empty holder holds nothing")
		require.Equal(t, 3, markRelayed(t, h, holder, at.Add(time.Second), evs))
		for _, id := range []struct{ ws, id uuid.UUID }{{ws1, a.ID}, {ws1, b.ID}, {ws2, c.ID}} {
			got := mustGetEvent(t, h, id.ws, id.id)
			require.Equal(t, model.OutboxDispatched, got.Status)
			requireSameTime(t, at.Add(time.Second), got.DispatchedAt, "dispatched_at")
			require.Empty(t, got.LockedBy)
			require.Zero(t, got.AttemptCount)
		}
		require.Equal(t, model.OutboxPending, mustGetEvent(t, h, ws2, other.ID).Status, "held by another writer")
		require.Equal(t, model.OutboxPending, mustGetEvent(t, h, ws2, plain.ID).Status, "not held")
		require.Zero(t, markRelayed(t, h, holder, at, evs), "marked already")
	})

	t.Run("ReleaseHeld hands events to the Dispatcher at once, uncounted", func(t *testing.T) {
		ws1, ws2 := newWorkspace(t, h), newWorkspace(t, h)
		a, b := heldEvent(t, ws1, at, at.Add(hold)), heldEvent(t, ws2, at, at.Add(hold))
		appendEvents(t, h, ws1, a)
		appendEvents(t, h, ws2, b)
		evs := map[uuid.UUID][]uuid.UUID{ws1: {a.ID}, ws2: {b.ID}}
		require.Equal(t, 2, releaseHeld(t, h, holder, at.Add(time.Second), "broker unreachable", evs))
		requireReturned(t, mustGetEvent(t, h, ws1, a.ID), 0, at.Add(time.Second), "broker unreachable")
		requireReturned(t, mustGetEvent(t, h, ws2, b.ID), 0, at.Add(time.Second), "broker unreachable")
		require.Zero(t, markRelayed(t, h, holder, at, evs), "released: the Dispatcher's now")

		c := claimEvents(t, h, ws1, "dispatcher", at.Add(time.Second), 10, maxAttempts)
		require.Equal(t, []uuid.UUID{a.ID}, eventIDs(c.Events))
		require.Zero(t, c.Events[0].AttemptCount)
	})

	t.Run("ReleaseHeld without an error keeps the last one", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := heldEvent(t, ws, at, at.Add(hold))
		e.LastError = "before"
		appendEvents(t, h, ws, e)
		require.Equal(t, 1, releaseHeld(t, h, holder, at, "", map[uuid.UUID][]uuid.UUID{ws: {e.ID}}))
		requireReturned(t, mustGetEvent(t, h, ws, e.ID), 0, at, "before")
	})

	t.Run("a held event written in a transaction that rolls back is gone", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := heldEvent(t, ws, at, at.Add(hold))
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			require.NoError(t, tx.Outbox().Append(ctx, e))
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		require.Zero(t, markRelayed(t, h, holder, at, map[uuid.UUID][]uuid.UUID{ws: {e.ID}}))
	})
}
