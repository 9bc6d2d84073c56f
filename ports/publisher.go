package ports

import (
	"context"
	"errors"

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
	// delivery is at-least-once and consumers deduplicate by ID. An error
	// that wraps ErrBrokerUnreachable says nothing about the messages; any
	// other error may be theirs. Publish returns by the end of ctx and
	// leaves no broker call running behind it.
	Publish(ctx context.Context, msgs ...Message) error
}

// ErrBrokerUnreachable is wrapped by Publish errors that are about the
// broker, not the messages: it could not be reached, dropped the
// connection, did not answer in time, or cannot accept anything right now.
// Every publish fails that way until it is back, so the Dispatcher backs
// off as a whole and counts no attempt against the events.
var ErrBrokerUnreachable = errors.New("broker unreachable")
