package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// dispatchRepo is the Dispatcher's side of the outbox in one transaction.
//
// Row locks, as PostgreSQL takes them: an event this transaction claims,
// changes or deletes is locked until it ends (db.eventLocks). Another
// transaction's claim skips a locked event (FOR UPDATE SKIP LOCKED), so two
// concurrent claims never get the same event. Where PostgreSQL would make a
// fenced update wait for the lock and then re-check it, the memory adapter
// does not wait: it treats a locked event as not the caller's (0 / false).
// The only difference is a stale owner whose competitor then rolls back,
// which PostgreSQL would let through and memory does not; both are allowed
// by the port (the caller is stale either way).
type dispatchRepo struct{ t *tx }

var _ ports.OutboxDispatch = dispatchRepo{}

// dueAt tells whether e is due at now and since when: a pending event from
// next_attempt_at, a dispatching one from the end of its lease.
func dueAt(e model.OutboxEvent, now time.Time) (time.Time, bool) {
	switch e.Status {
	case model.OutboxPending:
		return e.NextAttemptAt, !e.NextAttemptAt.After(now)
	case model.OutboxDispatching:
		return e.LockedUntil, !e.LockedUntil.After(now)
	}
	return time.Time{}, false
}

// lockedByOtherLocked reports whether another open transaction holds id.
func (r dispatchRepo) lockedByOtherLocked(id uuid.UUID) bool {
	holder := r.t.db.eventLocks[id]
	return holder != nil && holder != r.t
}

// stageLocked writes row as t's version of the event and locks it.
func (r dispatchRepo) stageLocked(row eventRow) {
	t := r.t
	t.events[row.event.ID] = row
	if t.db.eventLocks[row.event.ID] == nil {
		t.db.eventLocks[row.event.ID] = t
		t.lockedEvents = append(t.lockedEvents, row.event.ID)
	}
}

// ClaimDue claims as PostgreSQL's claimDueEvents does: up to limit due
// pending events and at most one expired lease (the oldest), oldest due
// first; a takeover counts an attempt, and dead-letters the event once its
// attempts reach maxAttempts. A pending event whose ordering key waits for
// an earlier event is not claimed (keyOrder.blockedLocked).
func (r dispatchRepo) ClaimDue(_ context.Context, owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (ports.Claim, error) {
	t := r.t
	return inLock(t, func() (ports.Claim, error) {
		if limit <= 0 {
			return ports.Claim{}, nil
		}
		if owner == "" {
			return ports.Claim{}, domain.Errorf(domain.CodeValidation, "a claim needs an owner")
		}
		if lease <= 0 || maxAttempts <= 0 {
			return ports.Claim{}, domain.Errorf(domain.CodeValidation, "a claim needs a positive lease and maximum of attempts")
		}
		if now.IsZero() {
			now = time.Now()
		}
		type candidate struct {
			row eventRow
			due time.Time
		}
		byDue := func(a, b candidate) int {
			return cmp.Or(a.due.Compare(b.due), cmp.Compare(a.row.seq, b.row.seq))
		}
		var pending, expired []candidate
		keys := t.keyOrderLocked()
		for _, row := range t.visibleEventsLocked() {
			if r.lockedByOtherLocked(row.event.ID) {
				continue
			}
			if at, ok := dueAt(row.event, now); ok {
				if row.event.Status == model.OutboxDispatching {
					expired = append(expired, candidate{row, at})
				} else if !keys.blockedLocked(t, row) {
					pending = append(pending, candidate{row, at})
				}
			}
		}
		slices.SortFunc(pending, byDue)
		slices.SortFunc(expired, byDue)
		due := append(pending[:min(len(pending), limit)], expired[:min(len(expired), 1)]...)
		slices.SortFunc(due, byDue)
		due = due[:min(len(due), limit)]
		var claim ports.Claim
		for _, c := range due {
			e := c.row.event
			takenOver := e.Status == model.OutboxDispatching
			if takenOver {
				e.AttemptCount++
				e.LastError = model.LeaseExpiredError(e.AttemptCount)
				e.ClearWait()
			}
			if takenOver && e.AttemptCount >= maxAttempts {
				e.Status, e.FailedIn = model.OutboxDeadLetter, model.FailedInDelivery
				e.LockedBy, e.LockedUntil = "", time.Time{}
			} else {
				e.Status = model.OutboxDispatching
				e.LockedBy = owner
				e.LockedUntil = now.Add(lease)
			}
			e = copyEvent(e)
			r.stageLocked(eventRow{event: e, seq: c.row.seq, keySeq: c.row.keySeq})
			switch {
			case e.Status == model.OutboxDeadLetter:
				claim.DeadLettered = append(claim.DeadLettered, e.ID)
			case takenOver:
				claim.TakenOver = append(claim.TakenOver, copyEvent(e))
			default:
				claim.Events = append(claim.Events, copyEvent(e))
			}
		}
		return claim, nil
	})
}

// ownedLocked returns event id if t may change it as owner: visible, not
// locked by another transaction, dispatching and locked by owner.
func (r dispatchRepo) ownedLocked(owner string, id uuid.UUID) (eventRow, bool) {
	row, ok := r.t.visibleEventLocked(id)
	if !ok || r.lockedByOtherLocked(id) {
		return eventRow{}, false
	}
	if row.event.Status != model.OutboxDispatching || row.event.LockedBy != owner {
		return eventRow{}, false
	}
	return row, true
}

// parkedLocked reports whether event id is visible, not locked by another
// transaction, and parked by its worker (model.OutboxEvent.ParkedByWorker).
func (r dispatchRepo) parkedLocked(id uuid.UUID) bool {
	row, ok := r.t.visibleEventLocked(id)
	return ok && !r.lockedByOtherLocked(id) && row.event.ParkedByWorker()
}

// settleOwned applies change to each of ids that owner still holds,
// clears its lease and stages it; it returns how many changed, plus, if
// countParked, how many a worker parked meanwhile (left as they are).
func (r dispatchRepo) settleOwned(owner string, ids []uuid.UUID, countParked bool, change func(*model.OutboxEvent)) (int, error) {
	t := r.t
	return inLock(t, func() (int, error) {
		n := 0
		for _, id := range ids {
			row, ok := r.ownedLocked(owner, id)
			if !ok {
				if countParked && r.parkedLocked(id) {
					n++
				}
				continue
			}
			change(&row.event)
			row.event.LockedBy, row.event.LockedUntil = "", time.Time{}
			row.event = copyEvent(row.event)
			r.stageLocked(row)
			n++
		}
		return n, nil
	})
}

func (r dispatchRepo) MarkDispatched(_ context.Context, owner string, ids []uuid.UUID, at time.Time) (int, error) {
	if at.IsZero() {
		at = time.Now()
	}
	// An event its worker parked before this mark stays parked and counts
	// as settled, as PostgreSQL's markDispatched does.
	return r.settleOwned(owner, ids, true, func(e *model.OutboxEvent) {
		e.Status = model.OutboxDispatched
		e.DispatchedAt = at
	})
}

func (r dispatchRepo) Release(_ context.Context, owner string, id uuid.UUID, nextAttemptAt time.Time, lastError string) (bool, error) {
	if nextAttemptAt.IsZero() {
		nextAttemptAt = time.Now()
	}
	n, err := r.settleOwned(owner, []uuid.UUID{id}, false, func(e *model.OutboxEvent) {
		e.Status = model.OutboxPending
		e.AttemptCount++
		e.NextAttemptAt = nextAttemptAt
		e.LastError = lastError
		e.ClearWait()
	})
	return n == 1, err
}

func (r dispatchRepo) Postpone(_ context.Context, owner string, ids []uuid.UUID, nextAttemptAt time.Time, lastError string) (int, error) {
	if nextAttemptAt.IsZero() {
		nextAttemptAt = time.Now()
	}
	return r.settleOwned(owner, ids, false, func(e *model.OutboxEvent) {
		e.Status = model.OutboxPending
		e.NextAttemptAt = nextAttemptAt
		if lastError != "" {
			e.LastError = lastError
			e.ClearWait()
		}
	})
}

func (r dispatchRepo) DeadLetter(_ context.Context, owner string, id uuid.UUID, lastError string) (bool, error) {
	n, err := r.settleOwned(owner, []uuid.UUID{id}, false, func(e *model.OutboxEvent) {
		e.Status, e.FailedIn = model.OutboxDeadLetter, model.FailedInDelivery
		e.AttemptCount++
		e.LastError = lastError
		e.ClearWait()
	})
	return n == 1, err
}

// Redrive moves dead letters back to pending. A nil ids means all of the
// workspace's; an empty, non-nil ids none. last_error is kept.
func (r dispatchRepo) Redrive(_ context.Context, ids []uuid.UUID, now time.Time) (int, error) {
	t := r.t
	now = orNow(now)
	return inLock(t, func() (int, error) {
		var rows []eventRow
		if ids == nil {
			rows = t.visibleEventsLocked()
		} else {
			for _, id := range ids {
				if row, ok := t.visibleEventLocked(id); ok {
					rows = append(rows, row)
				}
			}
		}
		n := 0
		seen := map[uuid.UUID]bool{}
		for _, row := range rows {
			if seen[row.event.ID] || row.event.Status != model.OutboxDeadLetter || r.lockedByOtherLocked(row.event.ID) {
				continue
			}
			seen[row.event.ID] = true
			row.event.Status = model.OutboxPending
			row.event.AttemptCount, row.event.JobAttempts, row.event.FailedIn = 0, 0, ""
			row.event.NextAttemptAt, row.event.CreatedAt = now, now // the job's deadline starts over
			row.event = copyEvent(row.event)
			r.stageLocked(row)
			n++
		}
		return n, nil
	})
}

// DeleteDispatchedBefore deletes up to limit events of the workspace
// dispatched before `before`, those dispatched first first, skipping events
// other transactions hold.
func (r dispatchRepo) DeleteDispatchedBefore(_ context.Context, before time.Time, limit int) (int, error) {
	t := r.t
	return inLock(t, func() (int, error) {
		var old []eventRow
		for _, row := range t.visibleEventsLocked() {
			if row.event.Status == model.OutboxDispatched && row.event.DispatchedAt.Before(before) &&
				!r.lockedByOtherLocked(row.event.ID) {
				old = append(old, row)
			}
		}
		slices.SortFunc(old, func(a, b eventRow) int {
			return cmp.Or(a.event.DispatchedAt.Compare(b.event.DispatchedAt), cmp.Compare(a.seq, b.seq))
		})
		old = old[:min(len(old), max(limit, 0))]
		for _, row := range old {
			id := row.event.ID
			delete(t.events, id)
			t.eventDeletes[id] = true
			if t.db.eventLocks[id] == nil {
				t.db.eventLocks[id] = t
				t.lockedEvents = append(t.lockedEvents, id)
			}
		}
		return len(old), nil
	})
}

// OutboxDiscovery finds outbox work across the whole DB: workspace ids and
// counts only, like the SECURITY DEFINER functions of the PostgreSQL
// adapter. It sees committed events only.
type OutboxDiscovery struct {
	db *DB
}

var _ ports.OutboxDiscovery = (*OutboxDiscovery)(nil)

// NewOutboxDiscovery returns an OutboxDiscovery over db.
func NewOutboxDiscovery(db *DB) *OutboxDiscovery { return &OutboxDiscovery{db: db} }

// WorkspacesWithDueEvents returns up to limit workspaces after the cursor
// with due events, in id order.
func (d *OutboxDiscovery) WorkspacesWithDueEvents(_ context.Context, now time.Time, after uuid.UUID, limit int) ([]uuid.UUID, error) {
	if now.IsZero() {
		now = time.Now()
	}
	return d.workspaces(limit, func(e model.OutboxEvent) bool {
		if slices.Compare(e.WorkspaceID[:], after[:]) <= 0 {
			return false
		}
		_, ok := dueAt(e, now)
		return ok
	}), nil
}

// WorkspacesWithDispatchedBefore returns up to limit workspaces with events
// dispatched before `before`, in id order.
func (d *OutboxDiscovery) WorkspacesWithDispatchedBefore(_ context.Context, before time.Time, limit int) ([]uuid.UUID, error) {
	return d.workspaces(limit, func(e model.OutboxEvent) bool {
		return e.Status == model.OutboxDispatched && e.DispatchedAt.Before(before)
	}), nil
}

func (d *OutboxDiscovery) workspaces(limit int, match func(model.OutboxEvent) bool) []uuid.UUID {
	d.db.mu.Lock()
	defer d.db.mu.Unlock()
	seen := map[uuid.UUID]bool{}
	var ids []uuid.UUID
	for _, row := range d.db.events {
		if ws := row.event.WorkspaceID; !seen[ws] && match(row.event) {
			seen[ws] = true
			ids = append(ids, ws)
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return ids[:min(len(ids), max(limit, 0))]
}

// Stats counts committed events per status (every status present, zeros
// included) and the age of the oldest due event.
func (d *OutboxDiscovery) Stats(_ context.Context, now time.Time) (ports.OutboxStats, error) {
	if now.IsZero() {
		now = time.Now()
	}
	d.db.mu.Lock()
	defer d.db.mu.Unlock()
	stats := ports.OutboxStats{ByStatus: map[model.OutboxStatus]int64{
		model.OutboxPending: 0, model.OutboxDispatching: 0, model.OutboxDispatched: 0, model.OutboxDeadLetter: 0,
	}}
	var oldest time.Time
	for _, row := range d.db.events {
		stats.ByStatus[row.event.Status]++
		if at, ok := dueAt(row.event, now); ok && (oldest.IsZero() || at.Before(oldest)) {
			oldest = at
		}
	}
	if !oldest.IsZero() {
		stats.OldestDueAge = max(now.Sub(oldest), 0)
	}
	return stats, nil
}

// Signal is the in-process ports.DispatchSignal: Committed wakes Wake at
// once. The channel holds one wake-up, so calls coalesce and never block.
// It is the in-process ports.OperationEnds too (operation_ends.go).
type Signal struct {
	wake chan struct{}
	ends operationEnds
}

var _ ports.DispatchSignal = (*Signal)(nil)

// NewSignal returns a Signal.
func NewSignal() *Signal { return &Signal{wake: make(chan struct{}, 1)} }

// Committed implements ports.DispatchSignal.
func (s *Signal) Committed() {
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// Wake implements ports.DispatchSignal.
func (s *Signal) Wake() <-chan struct{} { return s.wake }
