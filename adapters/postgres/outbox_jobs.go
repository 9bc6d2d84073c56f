package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// DeadLetterJob implements ports.Outbox.
func (o *Outbox) DeadLetterJob(ctx context.Context, id uuid.UUID, attempts int, reason string) (bool, error) {
	if attempts < 0 {
		return false, domain.Errorf(domain.CodeValidation, "a job's attempts cannot be negative")
	}
	// The Dispatcher's mark may be moving the event to the dispatched
	// history right now: follow it there (moved_rows.go).
	var n int
	err := retryMoved(ctx, o.db, func() error {
		var err error
		n, err = rowsAffected(o.db.ExecContext(ctx, deadLetterJob, attempts, strPtr(reason), o.workspace, id))
		return err
	})
	return n == 1, err
}

// Defer implements ports.Outbox.
func (o *Outbox) Defer(ctx context.Context, id uuid.UUID, until time.Time, jobAttempts int, wait model.JobWait) (bool, error) {
	if jobAttempts < 0 {
		return false, domain.Errorf(domain.CodeValidation, "a job's attempts cannot be negative")
	}
	if !wait.Kind.Valid() {
		return false, domain.Errorf(domain.CodeValidation, "a job's wait has no known kind")
	}
	// A mark may be moving the event between partitions right now, as for
	// DeadLetterJob.
	var n int
	err := retryMoved(ctx, o.db, func() error {
		var err error
		n, err = rowsAffected(o.db.ExecContext(ctx, deferJob, until, jobAttempts, strPtr(wait.Reason), o.workspace, id,
			string(wait.Kind), strPtr(wait.For)))
		return err
	})
	return n == 1, err
}

// Withdraw implements ports.Outbox.
func (o *Outbox) Withdraw(ctx context.Context, id uuid.UUID, reason string, at time.Time) (bool, error) {
	// A mark may be moving the event between partitions right now, as for
	// DeadLetterJob.
	var n int
	err := retryMoved(ctx, o.db, func() error {
		var err error
		n, err = rowsAffected(o.db.ExecContext(ctx, withdrawJob, at, strPtr(reason), o.workspace, id))
		return err
	})
	return n == 1, err
}

// Wake implements ports.Outbox.
func (o *Outbox) Wake(ctx context.Context, kind model.JobWaitKind, waitedFor string, from time.Time, within, every time.Duration) (int, error) {
	micros := max(every.Microseconds(), 1)
	return rowsAffected(o.db.ExecContext(ctx, wakeParked, from, micros, o.workspace, string(kind), waitedFor, max(within.Microseconds(), 0)))
}

// ListParked implements ports.Outbox.
func (o *Outbox) ListParked(ctx context.Context, limit int) ([]model.OutboxEvent, error) {
	if limit <= 0 {
		return []model.OutboxEvent{}, nil
	}
	var rows []outboxRow
	if err := o.db.NewRaw(selectParkedEvents, o.workspace, limit).Scan(ctx, &rows); err != nil {
		return nil, mapError(err, "outbox event")
	}
	out := make([]model.OutboxEvent, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}

// ForOperations implements ports.Outbox.
func (o *Outbox) ForOperations(ctx context.Context, ops []model.Operation) (map[uuid.UUID]model.OutboxEvent, error) {
	out := map[uuid.UUID]model.OutboxEvent{}
	if len(ops) == 0 {
		return out, nil
	}
	resources := make(map[uuid.UUID]uuid.UUID, len(ops))
	ids := make([]string, 0, len(ops))
	for _, op := range ops {
		resources[op.ID] = op.ResourceID
		ids = append(ids, op.ID.String())
	}
	var rows []outboxRow
	if err := o.db.NewRaw(selectEventsForOperations, o.workspace, bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, mapError(err, "outbox event")
	}
	for _, row := range rows {
		e := row.domain()
		opID, ok := model.JobOperationID(e.Payload)
		if resource, wanted := resources[opID]; ok && wanted && resource == e.AggregateID {
			out[opID] = e
		}
	}
	return out, nil
}

// Undelivered implements ports.Outbox. The status list keeps the query in
// the live and dead partitions (sql/009), which hold what is not
// dispatched: the dispatched history is never read.
func (o *Outbox) Undelivered(ctx context.Context, destination string, q ports.ListQuery) ([]model.OutboxEvent, error) {
	if q.Limit <= 0 {
		return []model.OutboxEvent{}, nil
	}
	var rows []outboxRow
	sel := o.db.NewSelect().Model(&rows).Where("workspace_id = ?", o.workspace).
		Where("status IN ('pending', 'dispatching', 'dead_letter')").Where("destination = ?", destination)
	if q.StartingAfter != uuid.Nil {
		sel = sel.Where("id < ?", q.StartingAfter)
	}
	err := sel.OrderExpr("id DESC").Limit(int64(q.Limit)).Scan(ctx)
	if err != nil {
		return nil, mapError(err, "outbox event")
	}
	out := make([]model.OutboxEvent, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}
