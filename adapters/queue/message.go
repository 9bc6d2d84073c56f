package queue

import (
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Metadata keys carried by every message. The watermill message UUID is the
// outbox event id, so brokers and consumers deduplicate on it.
const (
	MetadataEventType   = "event_type"
	MetadataWorkspaceID = "workspace_id"
	MetadataTraceparent = "traceparent"
	// The job's destination, ordering key, own failed attempts and commit
	// time (ports.Message); absent when empty or zero. created_at is
	// RFC 3339 with nanoseconds.
	MetadataDestination = "destination"
	MetadataOrderingKey = "ordering_key"
	MetadataAttempts    = "attempts"
	MetadataCreatedAt   = "created_at"
	MetadataWaitKind    = "wait_kind"
	MetadataWaitedFor   = "waited_for"
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
	setUnlessEmpty(msg, MetadataTraceparent, m.Traceparent)
	setUnlessEmpty(msg, MetadataDestination, m.Destination)
	setUnlessEmpty(msg, MetadataOrderingKey, m.OrderingKey)
	setUnlessEmpty(msg, MetadataWaitKind, string(m.WaitKind))
	setUnlessEmpty(msg, MetadataWaitedFor, m.WaitedFor)
	if m.Attempts != 0 {
		msg.Metadata.Set(MetadataAttempts, strconv.Itoa(m.Attempts))
	}
	if !m.CreatedAt.IsZero() {
		msg.Metadata.Set(MetadataCreatedAt, m.CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	return msg
}

func setUnlessEmpty(msg *message.Message, key, value string) {
	if value != "" {
		msg.Metadata.Set(key, value)
	}
}

// FromMessage maps a delivered watermill message back. A message whose id
// or workspace id is not a UUID, whose attempts are not a count or whose
// created_at is not a time can never be handled: the error is
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
		WaitKind:    model.JobWaitKind(msg.Metadata.Get(MetadataWaitKind)),
		WaitedFor:   msg.Metadata.Get(MetadataWaitedFor),
	}
	if ws := msg.Metadata.Get(MetadataWorkspaceID); ws != "" {
		if m.WorkspaceID, err = uuid.Parse(ws); err != nil {
			return ports.Message{}, domain.Wrap(domain.CodeValidation, err, "message workspace id is not a UUID")
		}
	}
	if err := readJobClock(msg, &m); err != nil {
		return ports.Message{}, err
	}
	return m, nil
}

// readJobClock reads the job's attempts and commit time into m.
func readJobClock(msg *message.Message, m *ports.Message) error {
	if a := msg.Metadata.Get(MetadataAttempts); a != "" {
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 {
			return domain.Errorf(domain.CodeValidation, "message attempts %q are not a count", a)
		}
		m.Attempts = n
	}
	if c := msg.Metadata.Get(MetadataCreatedAt); c != "" {
		at, err := time.Parse(time.RFC3339Nano, c)
		if err != nil {
			return domain.Wrap(domain.CodeValidation, err, "message created_at is not an RFC 3339 time")
		}
		m.CreatedAt = at
	}
	return nil
}
