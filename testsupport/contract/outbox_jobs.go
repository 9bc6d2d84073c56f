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

// testOutboxJobs covers the outbox calls made for jobs rather than for
// delivery: parking the event of a job a worker gave up on, and finding
// the event of an operation.
func testOutboxJobs(t *testing.T, h Harness) {
	ws, other := newWorkspace(t, h), newWorkspace(t, h)
	at := now()

	t.Run("DeadLetterJob parks the event whatever its status, keeping its attempts", func(t *testing.T) {
		e := newEvent(t, ws, at)
		appendEvents(t, h, ws, e)
		found := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (bool, error) {
			return tx.Outbox().DeadLetterJob(ctx, e.ID, 1, "the job failed: platform unavailable")
		})
		require.True(t, found)
		got, err := getEvent(t, h, ws, e.ID)
		require.NoError(t, err)
		require.Equal(t, model.OutboxDeadLetter, got.Status)
		require.Equal(t, "the job failed: platform unavailable", got.LastError)
		require.Equal(t, 0, got.AttemptCount)
		require.Contains(t, eventIDs(listEvents(t, h, ws, model.OutboxDeadLetter, 10)), e.ID)
	})

	t.Run("DeadLetterJob finds no event of another workspace, nor an unknown one", func(t *testing.T) {
		e := newEvent(t, other, at)
		appendEvents(t, h, other, e)
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			for _, id := range []uuid.UUID{e.ID, uuid.New()} {
				found, err := tx.Outbox().DeadLetterJob(ctx, id, 1, "x")
				require.NoError(t, err)
				require.False(t, found, "event %s", id)
			}
			return nil
		})
		got, err := getEvent(t, h, other, e.ID)
		require.NoError(t, err)
		require.Equal(t, model.OutboxPending, got.Status)
	})

	t.Run("Withdraw retires a waiting or dead-lettered event, never one in flight", func(t *testing.T) {
		ws := newWorkspace(t, h)
		withdraw := func(id uuid.UUID) bool {
			return mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (bool, error) {
				return tx.Outbox().Withdraw(ctx, id, "cancelled", at)
			})
		}
		requireWithdrawn := func(id uuid.UUID) {
			t.Helper()
			got := mustGetEvent(t, h, ws, id)
			require.Equal(t, model.OutboxDispatched, got.Status)
			require.Equal(t, "cancelled", got.LastError)
			require.Empty(t, got.LockedBy)
		}

		waiting := newEvent(t, ws, at)
		appendEvents(t, h, ws, waiting)
		require.True(t, withdraw(waiting.ID))
		requireWithdrawn(waiting.ID)
		require.Empty(t, claimDue(t, h, ws, "d1", at.Add(time.Hour), 10), "a withdrawn event is never claimed")
		require.False(t, withdraw(waiting.ID), "twice: nothing more to do")

		parked := claimedEvent(t, h, ws, "d1", at)
		require.Equal(t, 1, markDispatched(t, h, ws, "d1", at, parked.ID))
		require.True(t, deferEvent(t, h, ws, parked.ID, at.Add(time.Hour), 1, model.JobWait{Kind: model.JobWaitRetry, For: "shopify/shop-1", Reason: "shopify/shop-1 is down"}))
		require.True(t, withdraw(parked.ID), "a worker's wait is waiting too")
		requireWithdrawn(parked.ID)

		dead := newEvent(t, ws, at)
		appendEvents(t, h, ws, dead)
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			_, err := tx.Outbox().DeadLetterJob(ctx, dead.ID, 1, "gave up")
			return err
		})
		require.True(t, withdraw(dead.ID))
		requireWithdrawn(dead.ID)

		dispatching := claimedEvent(t, h, ws, "d2", at)
		require.False(t, withdraw(dispatching.ID), "in flight: its job finds the operation cancelled")
		require.Equal(t, model.OutboxDispatching, mustGetEvent(t, h, ws, dispatching.ID).Status)
		require.Equal(t, 1, markDispatched(t, h, ws, "d2", at, dispatching.ID))
		require.False(t, withdraw(dispatching.ID), "dispatched: already handed to the workers")

		require.False(t, withdraw(uuid.New()))
		foreign := newEvent(t, other, at)
		appendEvents(t, h, other, foreign)
		require.False(t, withdraw(foreign.ID), "another workspace's event is not seen")
		require.Equal(t, model.OutboxPending, mustGetEvent(t, h, other, foreign.ID).Status)
	})

	t.Run("ForOperations finds each operation's event by its payload and resource", func(t *testing.T) {
		e1, e2, foreign := newEvent(t, ws, at), newEvent(t, ws, at), newEvent(t, other, at)
		appendEvents(t, h, ws, e1, e2)
		appendEvents(t, h, other, foreign)
		op := func(e model.OutboxEvent) model.Operation {
			id, ok := model.JobOperationID(e.Payload)
			require.True(t, ok)
			return model.Operation{ID: id, WorkspaceID: e.WorkspaceID, ResourceID: e.AggregateID}
		}
		wrongResource := op(e2)
		wrongResource.ResourceID = uuid.New()
		ops := []model.Operation{op(e1), wrongResource, op(foreign), {ID: uuid.New(), ResourceID: uuid.New()}}
		got := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (map[uuid.UUID]model.OutboxEvent, error) {
			return tx.Outbox().ForOperations(ctx, ops)
		})
		require.Len(t, got, 1, "only the operation whose event names it and its resource, in this workspace")
		requireSameEvent(t, e1, got[ops[0].ID])

		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			none, err := tx.Outbox().ForOperations(ctx, nil)
			require.Empty(t, none)
			return err
		})
	})
}

// testOutboxUndelivered: what is not dispatched on the way to one
// destination, newest first, in the workspace only.
func testOutboxUndelivered(t *testing.T, h Harness) {
	ws, other := newWorkspace(t, h), newWorkspace(t, h)
	at := now()
	const dest = "shopify/shop-1" // newEvent's
	// Ids in time order, as the outbox's are.
	dispatched := dispatchedEvent(t, h, ws, at)
	dead := deadLetterEvent(t, h, ws, at.Add(time.Second))
	pending := newEvent(t, ws, at.Add(2*time.Second))
	pending.ID = uuid.Must(uuid.NewV7())
	elsewhere := newEvent(t, ws, at.Add(3*time.Second))
	elsewhere.ID = uuid.Must(uuid.NewV7())
	elsewhere.Destination = "webhook/" + uuid.NewString()
	appendEvents(t, h, ws, pending, elsewhere)
	appendEvents(t, h, other, newEvent(t, other, at))

	undelivered := func(destination string, q ports.ListQuery) []uuid.UUID {
		return eventIDs(mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.OutboxEvent, error) {
			return tx.Outbox().Undelivered(ctx, destination, q)
		}))
	}
	got := undelivered(dest, ports.ListQuery{Limit: 10})
	require.ElementsMatch(t, []uuid.UUID{pending.ID, dead}, got)
	require.NotContains(t, got, dispatched)
	first := undelivered(dest, ports.ListQuery{Limit: 1})
	require.Len(t, first, 1)
	require.Equal(t, got[:1], first, "newest first by id")
	require.Equal(t, got[1:], undelivered(dest, ports.ListQuery{Limit: 10, StartingAfter: first[0]}))
	require.Equal(t, []uuid.UUID{elsewhere.ID}, undelivered(elsewhere.Destination, ports.ListQuery{Limit: 10}))
	require.Empty(t, undelivered(dest, ports.ListQuery{}))
}
