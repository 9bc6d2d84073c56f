package queue

import (
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
	}
	if ws := msg.Metadata.Get(MetadataWorkspaceID); ws != "" {
		if m.WorkspaceID, err = uuid.Parse(ws); err != nil {
			return ports.Message{}, domain.Wrap(domain.CodeValidation, err, "message workspace id is not a UUID")
		}
	}
	return m, nil
}
