package ports

import "github.com/oncehq/once/domain/model"

// MessageOf is the message that delivers event: what the Dispatcher and a
// writer's relay publish, and what a worker receives.
func MessageOf(e model.OutboxEvent) Message {
	return Message{
		ID:          e.ID,
		Type:        e.Type,
		WorkspaceID: e.WorkspaceID,
		Payload:     []byte(e.Payload),
		Traceparent: e.Traceparent,
		Destination: e.Destination,
		OrderingKey: e.OrderingKey,
		Attempts:    e.JobAttempts,
		CreatedAt:   e.CreatedAt,
		WaitKind:    e.WaitKind,
		WaitedFor:   e.WaitedFor,
	}
}
