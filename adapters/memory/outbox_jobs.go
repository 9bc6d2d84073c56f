package memory

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// DeadLetterJob implements ports.Outbox. Where PostgreSQL would wait for a
// Dispatcher that holds the row, memory answers CodeUnavailable: the
// worker delivers the message again and gives up once more.
func (r outboxRepo) DeadLetterJob(_ context.Context, id uuid.UUID, attempts int, reason string) (bool, error) {
	if attempts < 0 {
		return false, domain.Errorf(domain.CodeValidation, "a job's attempts cannot be negative")
	}
	t := r.t
	return inLock(t, func() (bool, error) {
		d := dispatchRepo{t}
		row, ok := t.visibleEventLocked(id)
		if !ok {
			return false, nil
		}
		if d.lockedByOtherLocked(id) {
			return false, domain.Errorf(domain.CodeUnavailable, "outbox event %s is locked by another transaction", id)
		}
		row.event.Status, row.event.FailedIn, row.event.JobAttempts = model.OutboxDeadLetter, model.FailedInJob, attempts
		row.event.LastError = reason
		row.event.ClearWait()
		row.event.LockedBy, row.event.LockedUntil = "", time.Time{}
		row.event = copyEvent(row.event)
		d.stageLocked(row)
		return true, nil
	})
}

// Defer implements ports.Outbox, as PostgreSQL's deferJob: an event in
// flight (dispatched, dispatching, or pending and held by a relay) is
// parked, unless its job ended (the operation its payload names is
// finished, read once no other transaction holds its row, as deferJob's
// FOR SHARE waits); a locked event answers CodeUnavailable as
// DeadLetterJob does.
func (r outboxRepo) Defer(ctx context.Context, id uuid.UUID, until time.Time, jobAttempts int, wait model.JobWait) (bool, error) {
	if jobAttempts < 0 {
		return false, domain.Errorf(domain.CodeValidation, "a job's attempts cannot be negative")
	}
	if !wait.Kind.Valid() {
		return false, domain.Errorf(domain.CodeValidation, "a job's wait has no known kind")
	}
	t := r.t
	if op, ok := r.operationOf(id); ok {
		if err := t.db.waitRowLock(ctx, t, operationRowLock(op)); err != nil {
			return false, err
		}
	}
	return inLock(t, func() (bool, error) {
		d := dispatchRepo{t}
		row, ok := t.visibleEventLocked(id)
		if !ok || !inFlight(row.event) || jobEndedLocked(t, row.event) {
			return false, nil
		}
		if d.lockedByOtherLocked(id) {
			return false, domain.Errorf(domain.CodeUnavailable, "outbox event %s is locked by another transaction", id)
		}
		e := &row.event
		e.Status, e.NextAttemptAt, e.JobAttempts, e.LastError = model.OutboxPending, until, jobAttempts, wait.Reason
		e.WaitKind, e.WaitedFor = wait.Kind, wait.For
		e.LockedBy, e.LockedUntil, e.DispatchedAt, e.AttemptCount = "", time.Time{}, time.Time{}, 0
		row.event = copyEvent(row.event)
		d.stageLocked(row)
		return true, nil
	})
}

// operationOf is the operation event id's payload names, if t sees the
// event and it names one.
func (r outboxRepo) operationOf(id uuid.UUID) (uuid.UUID, bool) {
	op, _ := inLock(r.t, func() (uuid.UUID, error) {
		row, ok := r.t.visibleEventLocked(id)
		if !ok {
			return uuid.Nil, nil
		}
		op, _ := model.JobOperationID(row.event.Payload)
		return op, nil
	})
	return op, op != uuid.Nil
}

// jobEndedLocked reports whether the job of e ended: the operation its
// payload names is one t sees, finished. Call with db.mu held.
func jobEndedLocked(t *tx, e model.OutboxEvent) bool {
	id, ok := model.JobOperationID(e.Payload)
	if !ok {
		return false
	}
	op, seen := operationTable.visibleLocked(t, id)
	return seen && op.Finished()
}

// Withdraw implements ports.Outbox, as PostgreSQL's withdrawJob: an event
// waiting or dead-lettered is retired as dispatched; one in flight is left
// alone; a locked one answers CodeUnavailable as DeadLetterJob does.
func (r outboxRepo) Withdraw(_ context.Context, id uuid.UUID, reason string, at time.Time) (bool, error) {
	t := r.t
	return inLock(t, func() (bool, error) {
		d := dispatchRepo{t}
		row, ok := t.visibleEventLocked(id)
		if !ok || inFlight(row.event) {
			return false, nil
		}
		if d.lockedByOtherLocked(id) {
			return false, domain.Errorf(domain.CodeUnavailable, "outbox event %s is locked by another transaction", id)
		}
		e := &row.event
		e.Status, e.DispatchedAt, e.LastError, e.FailedIn = model.OutboxDispatched, at, reason, ""
		e.ClearWait()
		e.LockedBy, e.LockedUntil = "", time.Time{}
		row.event = copyEvent(row.event)
		d.stageLocked(row)
		return true, nil
	})
}

// inFlight reports whether e has been published and its job may be
// running: dispatched, dispatching, or held by a writer's relay (the only
// pending events with a lock).
func inFlight(e model.OutboxEvent) bool {
	switch e.Status {
	case model.OutboxDispatched, model.OutboxDispatching:
		return true
	case model.OutboxPending:
		return e.LockedBy != ""
	}
	return false
}

// ListParked implements ports.Outbox, soonest due first (events due at
// once in the order written; the port leaves their order open).
func (r outboxRepo) ListParked(_ context.Context, limit int) ([]model.OutboxEvent, error) {
	t := r.t
	return inLock(t, func() ([]model.OutboxEvent, error) {
		var rows []eventRow
		for _, row := range t.visibleEventsLocked() {
			if row.event.ParkedByWorker() {
				rows = append(rows, row)
			}
		}
		slices.SortFunc(rows, func(a, b eventRow) int {
			return cmp.Or(a.event.NextAttemptAt.Compare(b.event.NextAttemptAt), cmp.Compare(a.seq, b.seq))
		})
		return firstEvents(rows, limit), nil
	})
}

// Wake implements ports.Outbox, as PostgreSQL's wakeParked: in whole
// microseconds, as it counts.
func (r outboxRepo) Wake(_ context.Context, kind model.JobWaitKind, waitedFor string, from time.Time, within, every time.Duration) (int, error) {
	every = max(every.Truncate(time.Microsecond), time.Microsecond)
	within = max(within.Truncate(time.Microsecond), 0)
	t := r.t
	return inLock(t, func() (int, error) {
		d := dispatchRepo{t}
		var rows []eventRow
		for _, row := range t.visibleEventsLocked() {
			e := row.event
			if e.Status == model.OutboxPending && e.LockedBy == "" && e.WaitKind == kind && waitedFor != "" && e.WaitedFor == waitedFor &&
				e.NextAttemptAt.After(from.Add(within)) &&
				!d.lockedByOtherLocked(e.ID) {
				rows = append(rows, row)
			}
		}
		slices.SortFunc(rows, func(a, b eventRow) int {
			return cmp.Or(a.event.NextAttemptAt.Compare(b.event.NextAttemptAt), cmp.Compare(a.event.ID.String(), b.event.ID.String()))
		})
		gap := every
		if len(rows) > 0 {
			gap = max(min(every, time.Duration(within.Microseconds()/int64(len(rows)))*time.Microsecond), time.Microsecond)
		}
		for i, row := range rows {
			row.event.NextAttemptAt = from.Add(time.Duration(i) * gap)
			row.event = copyEvent(row.event)
			d.stageLocked(row)
		}
		return len(rows), nil
	})
}

// ForOperations implements ports.Outbox.
func (r outboxRepo) ForOperations(_ context.Context, ops []model.Operation) (map[uuid.UUID]model.OutboxEvent, error) {
	t := r.t
	return inLock(t, func() (map[uuid.UUID]model.OutboxEvent, error) {
		resources := make(map[uuid.UUID]uuid.UUID, len(ops)) // operation -> resource
		for _, op := range ops {
			resources[op.ID] = op.ResourceID
		}
		out := map[uuid.UUID]model.OutboxEvent{}
		for _, row := range t.visibleEventsLocked() {
			opID, ok := model.JobOperationID(row.event.Payload)
			if resource, wanted := resources[opID]; ok && wanted && resource == row.event.AggregateID {
				out[opID] = copyEvent(row.event)
			}
		}
		return out, nil
	})
}

// Undelivered implements ports.Outbox.
func (r outboxRepo) Undelivered(_ context.Context, destination string, q ports.ListQuery) ([]model.OutboxEvent, error) {
	t := r.t
	return inLock(t, func() ([]model.OutboxEvent, error) {
		var rows []eventRow
		for _, row := range t.visibleEventsLocked() {
			e := row.event
			if e.WorkspaceID == t.workspace && e.Destination == destination && e.Status != model.OutboxDispatched &&
				(q.StartingAfter == uuid.Nil || bytes.Compare(e.ID[:], q.StartingAfter[:]) < 0) {
				rows = append(rows, row)
			}
		}
		slices.SortFunc(rows, func(a, b eventRow) int { return bytes.Compare(b.event.ID[:], a.event.ID[:]) })
		return firstEvents(rows, q.Limit), nil
	})
}
