package testkit

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// WebhookEndpoint writes an endpoint of workspace for url, subscribed to
// every event type, with a sealed secret that opens with no key (the
// tests that use it deliver nothing).
func WebhookEndpoint(t testing.TB, uow ports.UnitOfWork, workspace uuid.UUID, url string, enabled bool) model.WebhookEndpoint {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	e := model.WebhookEndpoint{
		ID: uuid.Must(uuid.NewV7()), WorkspaceID: workspace, URL: url, Enabled: enabled,
		EventTypes:    slices.Clone(model.WebhookEventTypes),
		SecretVersion: 1, SealedSecret: []byte("not a real sealed secret"), CreatedAt: now, UpdatedAt: now,
	}
	err := uow.Transact(context.Background(), workspace, func(ctx context.Context, tx ports.Tx) error {
		return ports.Repository[ports.WebhookEndpointRepository](tx).Create(ctx, e)
	})
	if err != nil {
		t.Fatalf("create webhook endpoint: %v", err)
	}
	return e
}

// PendingDelivery appends a delivery of an operation's success to
// endpoint of workspace, created at `at` and due at due.
func PendingDelivery(t testing.TB, uow ports.UnitOfWork, workspace, endpoint uuid.UUID, at, due time.Time) model.OutboxEvent {
	t.Helper()
	e := newDelivery(t, workspace, endpoint, at)
	e.NextAttemptAt = due
	if err := uow.Transact(context.Background(), workspace, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, e)
	}); err != nil {
		t.Fatalf("append delivery: %v", err)
	}
	return e
}

// DeadDelivery appends a delivery to endpoint of workspace and parks it
// with lastError, as a worker gives up on it after one run.
func DeadDelivery(t testing.TB, uow ports.UnitOfWork, workspace, endpoint uuid.UUID, at time.Time, lastError string) model.OutboxEvent {
	t.Helper()
	return jobDeadLettered(t, uow, newDelivery(t, workspace, endpoint, at), 1, lastError)
}

// newDelivery is a pending webhook delivery to endpoint, created and due
// at `at`, with a time-ordered id as the outbox's.
func newDelivery(t testing.TB, workspace, endpoint uuid.UUID, at time.Time) model.OutboxEvent {
	t.Helper()
	op := uuid.New()
	e, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), workspace, model.EventWebhookDeliver, "operation", op,
		model.WebhookDelivery{EndpointID: endpoint, Event: model.WebhookEventBody{
			Type: model.WebhookOperationSucceeded, Timestamp: at,
			Data: model.WebhookEventData{OperationID: op, Kind: "store.verify", Status: model.OperationSucceeded},
		}}, at)
	if err != nil {
		t.Fatalf("new delivery: %v", err)
	}
	e.Destination = model.WebhookDestination(endpoint)
	return e
}
