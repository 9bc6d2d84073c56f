package webhooks

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// newDeliveryID makes a delivery's id: time-ordered, as every outbox
// event's, so the outbox's indexes stay compact.
var newDeliveryID = func() uuid.UUID { return uuid.Must(uuid.NewV7()) }

// OperationEnded writes, in tx, the transaction that ends op, one
// delivery per enabled endpoint of op's workspace that subscribed to its
// end (operation.succeeded or operation.failed), as outbox events: the
// end and its notifications commit together, or neither does. An
// operation that has not ended notifies nothing.
func OperationEnded(ctx context.Context, tx ports.Tx, op model.Operation) error {
	var eventType string
	switch op.Status {
	case model.OperationSucceeded:
		eventType = model.WebhookOperationSucceeded
	case model.OperationFailed:
		eventType = model.WebhookOperationFailed
	case model.OperationCancelled:
		eventType = model.WebhookOperationCancelled
	default:
		return nil
	}
	return notify(ctx, tx, op.WorkspaceID, "operation", op.ID, model.WebhookEventBody{
		Type: eventType, Timestamp: op.UpdatedAt,
		Data: model.WebhookEventData{
			OperationID: op.ID, Kind: op.Kind, Status: op.Status, ResourceType: op.ResourceType, ResourceID: op.ResourceID,
		},
	})
}

// DeadLettered writes, in tx, the transaction that dead-letters the
// outbox event id (of eventType, the job of operation if it has one), the
// deliveries of dead_letter.created. The dead letter of a delivery itself
// notifies nothing: a receiver that is down would be sent the news of its
// own failures, each failing in turn.
func DeadLettered(ctx context.Context, tx ports.Tx, workspace, id uuid.UUID, eventType string, operation uuid.UUID, at time.Time) error {
	if eventType == model.EventWebhookDeliver {
		return nil
	}
	return notify(ctx, tx, workspace, "outbox_event", id, model.WebhookEventBody{
		Type: model.WebhookDeadLetterCreated, Timestamp: at,
		Data: model.WebhookEventData{EventID: id, EventType: eventType, OperationID: operation},
	})
}

// notify appends one delivery of event to each endpoint subscribed to it.
func notify(ctx context.Context, tx ports.Tx, workspace uuid.UUID, aggregateType string, aggregateID uuid.UUID, event model.WebhookEventBody) error {
	endpoints, err := repo(tx).Subscribed(ctx, event.Type)
	if err != nil || len(endpoints) == 0 {
		return err
	}
	deliveries := make([]model.OutboxEvent, 0, len(endpoints))
	for _, e := range endpoints {
		d, err := model.NewOutboxEvent(newDeliveryID(), workspace, model.EventWebhookDeliver, aggregateType, aggregateID,
			model.WebhookDelivery{EndpointID: e.ID, Event: event}, event.Timestamp)
		if err != nil {
			return err
		}
		d.Destination = model.WebhookDestination(e.ID)
		deliveries = append(deliveries, d)
	}
	return tx.Outbox().Append(ctx, deliveries...)
}
