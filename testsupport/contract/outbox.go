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

// newEvent returns a pending store.credentials.verify event of workspace
// created at at.
func newEvent(t *testing.T, workspace uuid.UUID, at time.Time) model.OutboxEvent {
	t.Helper()
	store := uuid.New()
	e, err := model.NewOutboxEvent(uuid.New(), workspace, model.EventStoreCredentialsVerify, "store", store,
		model.StoreCredentialsVerify{StoreID: store, CredentialVersion: 1, JobOperation: model.JobOperation{OperationID: uuid.New()}}, at)
	require.NoError(t, err)
	e.Traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	e.Destination, e.OrderingKey, e.JobAttempts = "shopify/shop-1", "catalog/"+store.String(), 2
	return e
}

// requireSameEvent compares every field; the payload as JSON, since a
// database may store it reformatted.
func requireSameEvent(t *testing.T, want, got model.OutboxEvent) {
	t.Helper()
	require.JSONEq(t, string(want.Payload), string(got.Payload))
	norm := func(e model.OutboxEvent) model.OutboxEvent {
		e.Payload = nil
		e.NextAttemptAt = dbTime(e.NextAttemptAt)
		e.LockedUntil = dbTime(e.LockedUntil)
		e.CreatedAt = dbTime(e.CreatedAt)
		e.DispatchedAt = dbTime(e.DispatchedAt)
		return e
	}
	require.Equal(t, norm(want), norm(got))
}

func appendEvents(t *testing.T, h Harness, workspace uuid.UUID, events ...model.OutboxEvent) {
	t.Helper()
	mustTransact(t, h, workspace, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, events...)
	})
}

func getEvent(t *testing.T, h Harness, workspace, id uuid.UUID) (model.OutboxEvent, error) {
	t.Helper()
	return query(t, h, workspace, func(ctx context.Context, tx ports.Tx) (model.OutboxEvent, error) {
		return tx.Outbox().Get(ctx, id)
	})
}

func listEvents(t *testing.T, h Harness, workspace uuid.UUID, status model.OutboxStatus, limit int) []model.OutboxEvent {
	t.Helper()
	return mustQuery(t, h, workspace, func(ctx context.Context, tx ports.Tx) ([]model.OutboxEvent, error) {
		return tx.Outbox().List(ctx, status, limit)
	})
}

func eventIDs(events []model.OutboxEvent) []uuid.UUID {
	return ids(events, func(e model.OutboxEvent) uuid.UUID { return e.ID })
}

func testOutbox(t *testing.T, h Harness) {
	t.Run("append then get keeps every field", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newEvent(t, ws, now())
		appendEvents(t, h, ws, e)
		got, err := getEvent(t, h, ws, e.ID)
		require.NoError(t, err)
		requireSameEvent(t, e, got)
		require.Equal(t, model.OutboxPending, got.Status)
	})

	t.Run("list is oldest first, filtered by status, limited", func(t *testing.T) {
		ws := newWorkspace(t, h)
		t0 := now()
		e1 := newEvent(t, ws, t0.Add(2*time.Second))
		e2 := newEvent(t, ws, t0)
		e3 := newEvent(t, ws, t0.Add(time.Second))
		appendEvents(t, h, ws, e1, e2)
		appendEvents(t, h, ws, e3)

		all := listEvents(t, h, ws, "", 10)
		require.Equal(t, []uuid.UUID{e2.ID, e3.ID, e1.ID}, eventIDs(all))
		requireSameEvent(t, e2, all[0])
		require.Equal(t, []uuid.UUID{e2.ID, e3.ID}, eventIDs(listEvents(t, h, ws, "", 2)))
		require.Equal(t, []uuid.UUID{e2.ID, e3.ID, e1.ID}, eventIDs(listEvents(t, h, ws, model.OutboxPending, 10)))
		require.Empty(t, listEvents(t, h, ws, model.OutboxDispatched, 10))
		require.Empty(t, listEvents(t, h, ws, model.OutboxDeadLetter, 10))
	})

	t.Run("dead letters page newest first, by id", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		var parked []uuid.UUID // oldest first
		for range 3 {
			e := newEvent(t, ws, now())
			e.ID = uuid.Must(uuid.NewV7())
			appendEvents(t, h, ws, e, newEvent(t, ws, now())) // the second stays pending
			mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
				_, err := tx.Outbox().DeadLetterJob(ctx, e.ID, 1, "the job failed")
				return err
			})
			parked = append(parked, e.ID)
		}
		stranger := newEvent(t, other, now())
		appendEvents(t, h, other, stranger)
		mustTransact(t, h, other, func(ctx context.Context, tx ports.Tx) error {
			_, err := tx.Outbox().DeadLetterJob(ctx, stranger.ID, 1, "the job failed")
			return err
		})
		page := func(q ports.ListQuery) []uuid.UUID {
			return eventIDs(mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.OutboxEvent, error) {
				return tx.Outbox().ListDeadLetters(ctx, q)
			}))
		}
		require.Equal(t, []uuid.UUID{parked[2], parked[1], parked[0]}, page(ports.ListQuery{Limit: 10}))
		require.Equal(t, []uuid.UUID{parked[2], parked[1]}, page(ports.ListQuery{Limit: 2}))
		require.Equal(t, []uuid.UUID{parked[0]}, page(ports.ListQuery{StartingAfter: parked[1], Limit: 2}))
		require.Empty(t, page(ports.ListQuery{}), "a limit of zero returns none")
	})

	t.Run("an event without a destination, ordering key or job attempts reads back without them", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newEvent(t, ws, now())
		e.Destination, e.OrderingKey, e.JobAttempts = "", "", 0
		appendEvents(t, h, ws, e)
		requireSameEvent(t, e, mustGetEvent(t, h, ws, e.ID))
	})

	t.Run("negative job attempts are refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newEvent(t, ws, now())
		e.JobAttempts = -1
		requireCode(t, transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Outbox().Append(ctx, e)
		}), domain.CodeValidation)
	})

	t.Run("an unsafe payload is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newEvent(t, ws, now())
		e.Payload = json.RawMessage(`{"store_id":"x","api_key":"sk_live_123"}`)
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Outbox().Append(ctx, e)
		})
		requireCode(t, err, domain.CodeUnsafePayload)
		_, err = getEvent(t, h, ws, e.ID)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newEvent(t, ws, now())
		appendEvents(t, h, ws, e)
		again := newEvent(t, ws, now())
		again.ID = e.ID
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Outbox().Append(ctx, again)
		})
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("an event of another workspace is refused", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		e := newEvent(t, wsB, now())
		err := transact(t, h, wsA, func(ctx context.Context, tx ports.Tx) error {
			return tx.Outbox().Append(ctx, e)
		})
		require.Error(t, err)
		_, err = getEvent(t, h, wsA, e.ID)
		requireCode(t, err, domain.CodeNotFound)
		_, err = getEvent(t, h, wsB, e.ID)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("missing is not found", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getEvent(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("events of another workspace are invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		e := newEvent(t, wsA, now())
		appendEvents(t, h, wsA, e)
		_, err := getEvent(t, h, wsB, e.ID)
		requireCode(t, err, domain.CodeNotFound)
		require.Empty(t, listEvents(t, h, wsB, "", 10))
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(listEvents(t, h, wsA, "", 10)))
	})
}
