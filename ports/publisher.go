package ports

import (
	"context"

	"github.com/google/uuid"
)

// Message is one outbox event on its way to a queue. ID is the outbox event
// id and becomes the broker's message id, so consumers can deduplicate.
type Message struct {
	ID          uuid.UUID
	Type        string
	WorkspaceID uuid.UUID
	Payload     []byte
	// Traceparent is the W3C trace context of the request that wrote the
	// event, when there was one.
	Traceparent string
}

// Publisher hands messages to a queue.
type Publisher interface {
	// Publish returns nil only once the broker has accepted every message
	// (for AMQP: confirmed). On error some messages may have been accepted:
	// delivery is at-least-once and consumers deduplicate by ID.
	Publish(ctx context.Context, msgs ...Message) error
}
