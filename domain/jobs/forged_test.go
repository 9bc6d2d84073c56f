package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// forgery is a workspace with one job written to its outbox, and messages
// that claim to deliver it or another job of the workspace: what whoever
// can write to Redis or RabbitMQ could put on the broker.
type forgery struct {
	uow   ports.UnitOfWork
	ws    uuid.UUID
	event model.OutboxEvent
	// victim is a pending operation of the workspace that no event names.
	victim model.Operation
}

func newForgery(t *testing.T) forgery {
	t.Helper()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	f := forgery{uow: memory.NewUnitOfWork(memory.NewDB()), ws: uuid.New()}
	f.victim = model.Operation{
		ID: uuid.New(), WorkspaceID: f.ws, Kind: model.OperationStoreVerify, Status: model.OperationPending,
		ResourceType: "store", ResourceID: uuid.New(), CreatedBy: uuid.New(), CreatedAt: at, UpdatedAt: at,
	}
	var err error
	f.event, err = model.NewOutboxEvent(uuid.New(), f.ws, "test.job", "test", uuid.New(),
		testPayload{OperationID: uuid.New(), TaskID: uuid.New()}, at)
	require.NoError(t, err)
	require.NoError(t, f.uow.Transact(t.Context(), f.ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Operations().Create(ctx, f.victim); err != nil {
			return err
		}
		return tx.Outbox().Append(ctx, f.event)
	}))
	return f
}

// message is a message of id naming the victim's operation and task.
func (f forgery) message(t *testing.T, id uuid.UUID, eventType string) ports.Message {
	t.Helper()
	payload, err := json.Marshal(testPayload{OperationID: f.victim.ID, TaskID: f.victim.ResourceID})
	require.NoError(t, err)
	return ports.Message{ID: id, Type: eventType, WorkspaceID: f.ws, Payload: payload}
}

// A job runs only for a message that is an event of its workspace's
// outbox, as written: a message with an id the outbox does not hold, or
// with the id of an event whose payload it does not carry, never reaches
// the job's Begin; the event itself does.
func TestAForgedMessageRunsNoJob(t *testing.T) {
	f := newForgery(t)
	var begun []uuid.UUID
	h := jobs.NewHandler(jobs.Job[testPayload, string, string]{
		Event: "test.job", Noun: "test",
		Begin: func(_ context.Context, _ ports.Tx, _ *slog.Logger, run jobs.Run[testPayload], _ time.Time) (string, bool, error) {
			begun = append(begun, run.OperationID)
			return "", false, nil
		},
	}, f.uow, fixedClock(time.Now()), nil)

	for name, msg := range map[string]ports.Message{
		"unknown id":        f.message(t, uuid.New(), "test.job"),
		"another's payload": f.message(t, f.event.ID, "test.job"),
	} {
		err := h.Handle(t.Context(), msg)
		require.True(t, domain.IsCode(err, domain.CodeValidation), "%s: %v", name, err)
	}
	require.Empty(t, begun, "no forged message reached Begin")

	require.NoError(t, h.Handle(t.Context(), ports.MessageOf(f.event)))
	var stored testPayload
	require.NoError(t, json.Unmarshal(f.event.Payload, &stored))
	require.Equal(t, []uuid.UUID{stored.OperationID}, begun)
}

// Giving up on a forged message fails nothing: the operation its payload
// names is not the job of any event with its id.
func TestGivingUpOnAForgedMessageFailsNoOperation(t *testing.T) {
	f := newForgery(t)
	failures := jobs.NewFailures(f.uow, fixedClock(time.Now()), nil)
	for _, msg := range []ports.Message{
		f.message(t, uuid.New(), model.EventStoreCredentialsVerify),
		f.message(t, f.event.ID, "test.job"),
	} {
		require.NoError(t, failures.GiveUp(t.Context(), msg, errors.New("never succeeds"), 1))
	}
	got, err := ports.Query(t.Context(), f.uow, f.ws, func(ctx context.Context, tx ports.Tx) (model.Operation, error) {
		return tx.Operations().Get(ctx, f.victim.ID)
	})
	require.NoError(t, err)
	require.Equal(t, model.OperationPending, got.Status, "the victim's operation is left as it is")
	event, err := ports.Query(t.Context(), f.uow, f.ws, func(ctx context.Context, tx ports.Tx) (model.OutboxEvent, error) {
		return tx.Outbox().Get(ctx, f.event.ID)
	})
	require.NoError(t, err)
	require.NotEqual(t, model.OutboxDeadLetter, event.Status, "the event whose id was borrowed is not dead-lettered")
}
