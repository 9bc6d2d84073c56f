package memory

import (
	"github.com/oncehq/once/domain/model"
)

// keyBlockedLocked reports whether row waits for an earlier event of its
// ordering key, as claimDueEvents decides it in PostgreSQL
// (adapters/postgres/outbox_dispatch_sql.go): an earlier event (smaller
// keySeq, same workspace and key) that is pending, dispatching or
// dead-lettered blocks it, and so does the latest earlier dispatched one
// while its job's operation has not finished. An event without a key, or
// appended before its key was numbered, waits for nothing. Call with
// db.mu held.
func (t *tx) keyBlockedLocked(row eventRow) bool {
	if row.keySeq == 0 || row.event.OrderingKey == "" {
		return false
	}
	var latest *eventRow
	for _, other := range t.visibleEventsLocked() {
		if other.event.OrderingKey != row.event.OrderingKey || other.keySeq == 0 || other.keySeq >= row.keySeq {
			continue
		}
		switch other.event.Status {
		case model.OutboxPending, model.OutboxDispatching, model.OutboxDeadLetter:
			return true
		case model.OutboxDispatched:
			if latest == nil || other.keySeq > latest.keySeq {
				latest = &other
			}
		}
	}
	return latest != nil && !t.jobEndedLocked(latest.event)
}

// jobEndedLocked reports whether the job of a dispatched event has ended:
// its operation finished, or gone (retention removes only finished ones).
// An event that names no operation ends when it is dispatched. Call with
// db.mu held.
func (t *tx) jobEndedLocked(e model.OutboxEvent) bool {
	id, ok := model.JobOperationID(e.Payload)
	if !ok {
		return true
	}
	op, ok := operationTable.visibleLocked(t, id)
	return !ok || op.Finished()
}
