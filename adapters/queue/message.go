package queue

import (
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Metadata keys carried by every message. The watermill message UUID is the
// outbox event id, so brokers and consumers deduplicate on it.
const (
	MetadataEventType   = "event_type"
	MetadataWorkspaceID = "workspace_id"
	MetadataTraceparent = "traceparent"
	MetadataDestination = "destination"
	MetadataOrderingKey = "ordering_key"
	MetadataAttempts    = "attempts"
	MetadataCreatedAt   = "created_at"
)

// Topic is the broker topic of an event type: the namespace (e.g. "once.")
// followed by the event type (e.g. "store.credentials.verify").
func Topic(namespace, eventType string) string { return namespace + eventType }

// ToMessage maps an outbox message to a watermill message.
func ToMessage(m ports.Message) *message.Message {
	msg := message.NewMessage(m.ID.String(), m.Payload)
	msg.Metadata.Set(MetadataEventType, m.Type)
	if m.WorkspaceID != uuid.Nil {
		msg.Metadata.Set(MetadataWorkspaceID, m.WorkspaceID.String())
	}
	if m.Traceparent != "" {
		msg.Metadata.Set(MetadataTraceparent, m.Traceparent)
	}
	setIf(msg, MetadataDestination, m.Destination)
	setIf(msg, MetadataOrderingKey, m.OrderingKey)
	if m.Attempts > 0 {
		msg.Metadata.Set(MetadataAttempts, strconv.Itoa(m.Attempts))
	}
	if !m.CreatedAt.IsZero() {
		msg.Metadata.Set(MetadataCreatedAt, m.CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	return msg
}

// FromMessage maps a delivered watermill message back. A message whose id
// or workspace id is not a UUID can never be handled: the error is
// domain.CodeValidation, so the worker gives up on it at once.
func FromMessage(msg *message.Message) (ports.Message, error) {
	id, err := uuid.Parse(msg.UUID)
	if err != nil {
		return ports.Message{}, domain.Wrap(domain.CodeValidation, err, "message id is not an event id")
	}
	m := ports.Message{
		ID:          id,
		Type:        msg.Metadata.Get(MetadataEventType),
		Payload:     msg.Payload,
		Traceparent: msg.Metadata.Get(MetadataTraceparent),
		Destination: msg.Metadata.Get(MetadataDestination),
		OrderingKey: msg.Metadata.Get(MetadataOrderingKey),
	}
	if a := msg.Metadata.Get(MetadataAttempts); a != "" {
		if m.Attempts, err = strconv.Atoi(a); err != nil || m.Attempts < 0 {
			return ports.Message{}, domain.Errorf(domain.CodeValidation, "message attempts %q is not a count", a)
		}
	}
	if c := msg.Metadata.Get(MetadataCreatedAt); c != "" {
		if m.CreatedAt, err = time.Parse(time.RFC3339Nano, c); err != nil {
			return ports.Message{}, domain.Wrap(domain.CodeValidation, err, "message created_at is not a time")
		}
	}
	if ws := msg.Metadata.Get(MetadataWorkspaceID); ws != "" {
		if m.WorkspaceID, err = uuid.Parse(ws); err != nil {
			return ports.Message{}, domain.Wrap(domain.CodeValidation, err, "message workspace id is not a UUID")
		}
	}
	return m, nil
}

func setIf(msg *message.Message, key, value string) {
	if value != "" {
		msg.Metadata.Set(key, value)
	}
}
