package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// PendingEvent appends a store verification event to workspace, due at
// `at`, through uow. An event due later was created now.
func PendingEvent(t testing.TB, uow ports.UnitOfWork, workspace uuid.UUID, at time.Time) model.OutboxEvent {
	t.Helper()
	e := newEvent(t, workspace, at)
	if err := uow.Transact(context.Background(), workspace, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, e)
	}); err != nil {
		t.Fatalf("append event: %v", err)
	}
	return e
}

// newEvent is a pending store verification event of workspace, due at
// `at`. An event due later was created now.
func newEvent(t testing.TB, workspace uuid.UUID, at time.Time) model.OutboxEvent {
	t.Helper()
	store := uuid.New()
	e, err := model.NewOutboxEvent(uuid.New(), workspace, model.EventStoreCredentialsVerify, "store", store,
		model.StoreCredentialsVerify{StoreID: store, CredentialVersion: 1, JobOperation: model.JobOperation{OperationID: uuid.New()}}, at)
	if err != nil {
		t.Fatalf("new event: %v", err)
	}
	if now := time.Now(); at.After(now) {
		e.CreatedAt = now
	}
	return e
}

// DeadLetter appends an event to workspace and parks it with lastError, as
// a Dispatcher does after the last attempt. The workspace must have no
// other due event at `at`.
func DeadLetter(t testing.TB, uow ports.UnitOfWork, workspace uuid.UUID, at time.Time, lastError string) model.OutboxEvent {
	t.Helper()
	return deadLettered(t, uow, newEvent(t, workspace, at), at, lastError)
}

// deadLettered appends e, claims it at `at` and parks it with lastError.
func deadLettered(t testing.TB, uow ports.UnitOfWork, e model.OutboxEvent, at time.Time, lastError string) model.OutboxEvent {
	t.Helper()
	err := uow.Transact(context.Background(), e.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Outbox().Append(ctx, e); err != nil {
			return err
		}
		c, err := tx.OutboxDispatch().ClaimDue(ctx, "testkit", at, time.Minute, 1, 10)
		if err != nil {
			return err
		}
		if len(c.Events) != 1 || c.Events[0].ID != e.ID {
			t.Fatalf("claimed %d events, want the new one only", len(c.Events))
		}
		_, err = tx.OutboxDispatch().DeadLetter(ctx, "testkit", e.ID, lastError)
		return err
	})
	if err != nil {
		t.Fatalf("dead-letter event: %v", err)
	}
	e.Status, e.LastError, e.AttemptCount, e.FailedIn = model.OutboxDeadLetter, lastError, 1, model.FailedInDelivery
	return e
}

// JobDeadLetter appends an event to workspace and parks it as a worker
// does when it gives up on its job after attempts runs, with lastError.
func JobDeadLetter(t testing.TB, uow ports.UnitOfWork, workspace uuid.UUID, at time.Time, attempts int, lastError string) model.OutboxEvent {
	t.Helper()
	return jobDeadLettered(t, uow, newEvent(t, workspace, at), attempts, lastError)
}

// jobDeadLettered appends e and parks it as its worker gives up on it.
func jobDeadLettered(t testing.TB, uow ports.UnitOfWork, e model.OutboxEvent, attempts int, lastError string) model.OutboxEvent {
	t.Helper()
	err := uow.Transact(context.Background(), e.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Outbox().Append(ctx, e); err != nil {
			return err
		}
		_, err := tx.Outbox().DeadLetterJob(ctx, e.ID, attempts, lastError)
		return err
	})
	if err != nil {
		t.Fatalf("dead-letter job: %v", err)
	}
	e.Status, e.LastError, e.JobAttempts, e.FailedIn = model.OutboxDeadLetter, lastError, attempts, model.FailedInJob
	return e
}
