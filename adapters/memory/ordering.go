package memory

import (
	"github.com/oncehq/once/domain/model"
)

// keyOrder is, for one claim, every numbered event of t's workspace by
// ordering key, so that deciding whether a candidate waits reads only its
// own key's events.
type keyOrder map[string][]eventRow

// keyOrderLocked gathers the events with an ordering key and a keySeq
// that t sees. Call with db.mu held.
func (t *tx) keyOrderLocked() keyOrder {
	order := keyOrder{}
	for _, row := range t.visibleEventsLocked() {
		if row.keySeq != 0 && row.event.OrderingKey != "" {
			order[row.event.OrderingKey] = append(order[row.event.OrderingKey], row)
		}
	}
	return order
}

// blockedLocked reports whether row waits for an earlier event of its
// ordering key, as claimDueEvents decides it in PostgreSQL
// (adapters/postgres/outbox_dispatch_sql.go): an earlier event (smaller
// keySeq, same workspace and key) that is pending, dispatching or
// dead-lettered blocks it, and so does the latest earlier dispatched one
// while its job's operation has not finished. An event without a key, or
// not numbered, waits for nothing. Call with db.mu held.
func (o keyOrder) blockedLocked(t *tx, row eventRow) bool {
	if row.keySeq == 0 || row.event.OrderingKey == "" {
		return false
	}
	var latest *eventRow
	for i, other := range o[row.event.OrderingKey] {
		if other.keySeq >= row.keySeq {
			continue
		}
		switch other.event.Status {
		case model.OutboxPending, model.OutboxDispatching, model.OutboxDeadLetter:
			return true
		case model.OutboxDispatched:
			if latest == nil || other.keySeq > latest.keySeq {
				latest = &o[row.event.OrderingKey][i]
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
