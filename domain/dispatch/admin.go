package dispatch

import (
	"cmp"
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// MaxAdminBatch bounds what one operator call lists or re-drives by id.
const MaxAdminBatch = 1000

// Admin holds the operators' use cases on dead letters: look at them (the
// last error is already sanitized, the payload holds ids only) and send
// them again once the cause is fixed.
//
// Dead letters come from two places: events the Dispatcher could not
// deliver, and events whose job a worker gave up on (jobs.Failures). Both
// are listed and re-driven alike; re-driving the second kind reopens the
// job's task and operation first (JobReopener).
type Admin struct {
	uow    ports.UnitOfWork
	clock  ports.Clock
	signal ports.DispatchSignal
	jobs   JobReopener
}

// JobReopener prepares, in the re-drive's transaction, a dead-lettered
// event's job to run again (jobs.Failures.Reopen). A domain error with a
// non-transient code means this event cannot be re-driven now.
type JobReopener interface {
	Reopen(ctx context.Context, tx ports.Tx, event model.OutboxEvent) error
}

// NewAdmin builds the operator use cases. signal may be nil; when set,
// Dispatchers are woken after a re-drive. jobs may be nil (events are then
// re-driven without touching their jobs).
func NewAdmin(uow ports.UnitOfWork, clock ports.Clock, signal ports.DispatchSignal, jobs JobReopener) *Admin {
	return &Admin{uow: uow, clock: clock, signal: signal, jobs: jobs}
}

// ListDeadLetters returns up to limit (100 if <= 0, at most MaxAdminBatch)
// dead-lettered events of workspace, oldest first.
func (a *Admin) ListDeadLetters(ctx context.Context, workspace uuid.UUID, limit int) ([]model.OutboxEvent, error) {
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxAdminBatch)
	return ports.Query(ctx, a.uow, workspace, func(ctx context.Context, tx ports.Tx) ([]model.OutboxEvent, error) {
		return tx.Outbox().List(ctx, model.OutboxDeadLetter, limit)
	})
}

// Redrive moves dead-lettered events of workspace back to pending with a
// fresh attempt budget, due now, each in its own transaction with its job
// reopened. ids nil re-drives all of the workspace's dead letters; a
// non-nil empty slice re-drives none. Ids that are not dead letters are
// left alone. Returns how many moved; CodeValidation for more than
// MaxAdminBatch ids. An event whose job cannot be reopened stays a dead
// letter; if none moved, that error is returned.
func (a *Admin) Redrive(ctx context.Context, workspace uuid.UUID, ids []uuid.UUID) (int, error) {
	if ids != nil && len(ids) == 0 {
		return 0, nil
	}
	if len(ids) > MaxAdminBatch {
		return 0, domain.Errorf(domain.CodeValidation, "at most %d events can be re-driven at once", MaxAdminBatch)
	}
	moved := 0
	var refused error
	for {
		events, err := a.deadLetters(ctx, workspace, ids)
		if err != nil {
			return moved, err
		}
		n := 0
		for _, e := range events {
			ok, err := a.redrive(ctx, workspace, e.ID)
			if err != nil && domain.ErrorCode(err).RetrySameKey() {
				return moved + n, err
			}
			if err != nil {
				refused = err
			}
			if ok {
				n++
			}
		}
		moved += n
		if ids != nil || len(events) < MaxAdminBatch || n == 0 {
			break
		}
	}
	if moved > 0 && a.signal != nil {
		a.signal.Committed()
	}
	if moved == 0 && refused != nil {
		return 0, refused
	}
	return moved, nil
}

// deadLetters reads the dead letters among ids (nil: the oldest
// MaxAdminBatch of the workspace).
func (a *Admin) deadLetters(ctx context.Context, workspace uuid.UUID, ids []uuid.UUID) ([]model.OutboxEvent, error) {
	var events []model.OutboxEvent
	err := a.uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		events = events[:0]
		if ids == nil {
			var err error
			events, err = tx.Outbox().List(ctx, model.OutboxDeadLetter, MaxAdminBatch)
			return err
		}
		for _, id := range ids {
			e, err := tx.Outbox().Get(ctx, id)
			if domain.IsCode(err, domain.CodeNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if e.Status == model.OutboxDeadLetter {
				events = append(events, e)
			}
		}
		return nil
	})
	return events, err
}

// redrive re-drives one event, reopening its job, if it is still a dead
// letter.
func (a *Admin) redrive(ctx context.Context, workspace, id uuid.UUID) (bool, error) {
	var moved int
	err := a.uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		moved = 0
		e, err := tx.Outbox().Get(ctx, id)
		if err != nil || e.Status != model.OutboxDeadLetter {
			return err
		}
		if a.jobs != nil {
			if err := a.jobs.Reopen(ctx, tx, e); err != nil {
				return err
			}
		}
		moved, err = tx.OutboxDispatch().Redrive(ctx, []uuid.UUID{id}, a.clock.Now())
		return err
	})
	return moved == 1, err
}

// DeadLetterGroup is the dead letters that failed for the same reason.
type DeadLetterGroup struct {
	LastError string
	EventIDs  []uuid.UUID
}

// GroupByError groups events by their last error, the largest group first
// (then by error text), events in their given order within a group: what
// an operator fixes once and re-drives together.
func GroupByError(events []model.OutboxEvent) []DeadLetterGroup {
	index := map[string]int{}
	var groups []DeadLetterGroup
	for _, e := range events {
		i, ok := index[e.LastError]
		if !ok {
			i = len(groups)
			index[e.LastError] = i
			groups = append(groups, DeadLetterGroup{LastError: e.LastError})
		}
		groups[i].EventIDs = append(groups[i].EventIDs, e.ID)
	}
	slices.SortStableFunc(groups, func(a, b DeadLetterGroup) int {
		return cmp.Or(cmp.Compare(len(b.EventIDs), len(a.EventIDs)), cmp.Compare(a.LastError, b.LastError))
	})
	return groups
}

// Stage says where a dead letter gave up, as its adapter recorded it
// (model.OutboxEvent.FailedIn): "delivery" (the Dispatcher could not
// publish it) or "job" (it was delivered and the worker gave up on its
// job). Its last error is for people and is never read for this.
func Stage(e model.OutboxEvent) string {
	if e.FailedIn == model.FailedInJob {
		return string(model.FailedInJob)
	}
	return string(model.FailedInDelivery)
}
