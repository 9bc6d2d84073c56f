package memory

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// OutboxRelayMarks implements ports.OutboxRelayMarks: each workspace's
// events in a transaction of that workspace.
type OutboxRelayMarks struct{ uow *UnitOfWork }

var _ ports.OutboxRelayMarks = (*OutboxRelayMarks)(nil)

// NewOutboxRelayMarks returns the relay's marks over db.
func NewOutboxRelayMarks(db *DB) *OutboxRelayMarks {
	return &OutboxRelayMarks{uow: NewUnitOfWork(db)}
}

// MarkRelayed implements ports.OutboxRelayMarks.
func (m *OutboxRelayMarks) MarkRelayed(ctx context.Context, holder string, events map[uuid.UUID][]uuid.UUID, at time.Time) (int, error) {
	at = orNow(at)
	return m.settleHeld(ctx, holder, events, true, func(e *model.OutboxEvent) {
		e.Status = model.OutboxDispatched
		e.DispatchedAt = at
	})
}

// ReleaseHeld implements ports.OutboxRelayMarks.
func (m *OutboxRelayMarks) ReleaseHeld(ctx context.Context, holder string, events map[uuid.UUID][]uuid.UUID, nextAttemptAt time.Time, lastError string) (int, error) {
	nextAttemptAt = orNow(nextAttemptAt)
	return m.settleHeld(ctx, holder, events, false, func(e *model.OutboxEvent) {
		e.NextAttemptAt = nextAttemptAt
		if lastError != "" {
			e.LastError = lastError
			e.ClearWait()
		}
	})
}

// settleHeld applies change to every event still pending and held by
// holder, clears the hold, and counts them, plus, if countParked, those a
// worker parked meanwhile (left as they are, as markRelayed does).
func (m *OutboxRelayMarks) settleHeld(ctx context.Context, holder string, events map[uuid.UUID][]uuid.UUID, countParked bool, change func(*model.OutboxEvent)) (int, error) {
	total := 0
	if holder == "" {
		return 0, nil // an unheld event is nobody's to settle here
	}
	for ws, ids := range events {
		n, err := ports.Query(ctx, m.uow, ws, func(_ context.Context, ptx ports.Tx) (int, error) {
			r := dispatchRepo{ptx.(*tx)}
			return inLock(r.t, func() (int, error) {
				n := 0
				for _, id := range ids {
					row, ok := r.t.visibleEventLocked(id)
					if !ok || r.lockedByOtherLocked(id) ||
						row.event.Status != model.OutboxPending || row.event.LockedBy != holder {
						if countParked && r.parkedLocked(id) {
							n++
						}
						continue
					}
					change(&row.event)
					row.event.LockedBy = ""
					row.event = copyEvent(row.event)
					r.stageLocked(row)
					n++
				}
				return n, nil
			})
		})
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
