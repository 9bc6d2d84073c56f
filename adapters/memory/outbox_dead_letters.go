package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// ListDeadLetters pages the dead letters t sees as every list does
// (listNewest).
func (r outboxRepo) ListDeadLetters(_ context.Context, q ports.ListQuery) ([]model.OutboxEvent, error) {
	visible, _ := inLock(r.t, func() (map[uuid.UUID]model.OutboxEvent, error) {
		events := map[uuid.UUID]model.OutboxEvent{}
		for _, row := range r.t.visibleEventsLocked() {
			events[row.event.ID] = row.event
		}
		return events, nil
	})
	return listNewest(r.t, visible, nil, ports.ListQuery{StartingAfter: q.StartingAfter, Limit: q.Limit}, listShape[model.OutboxEvent]{
		ids:   func(e model.OutboxEvent) (uuid.UUID, uuid.UUID) { return e.ID, e.WorkspaceID },
		match: func(e model.OutboxEvent, _ ports.ListQuery) bool { return e.Status == model.OutboxDeadLetter },
		copy:  copyEvent,
	})
}
