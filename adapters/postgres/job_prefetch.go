package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/oncehq/once/domain/model"
)

// jobPrefetch holds the rows PrefetchJob read for the transaction's first
// Get of each (ports.Tx.PrefetchJob): each is handed out once.
type jobPrefetch struct {
	event     *model.OutboxEvent
	operation *model.Operation
}

// takeEvent is the prefetched event id, if there is one not handed out yet.
func (p *jobPrefetch) takeEvent(id uuid.UUID) (model.OutboxEvent, bool) {
	if p == nil || p.event == nil || p.event.ID != id {
		return model.OutboxEvent{}, false
	}
	e := *p.event
	p.event = nil
	return e, true
}

// takeOperation is the prefetched operation id, as takeEvent.
func (p *jobPrefetch) takeOperation(id uuid.UUID) (model.Operation, bool) {
	if p == nil || p.operation == nil || p.operation.ID != id {
		return model.Operation{}, false
	}
	op := *p.operation
	p.operation = nil
	return op, true
}

// prefetchEvent is Outbox.Get's first look (outboxNear) for pgx;
// prefetchOperation is OperationRepository.Get's read. Both name their
// columns in the order jobPrefetch scans them.
var (
	prefetchEvent = numberedPlaceholders(`SELECT ` + outboxEventColumns + `, key_seq
  FROM outbox_events WHERE ` + outboxNear)
	prefetchOperation = numberedPlaceholders(`SELECT id, workspace_id, kind, status, resource_type, resource_id, error,
       created_by, cancel_requested_at, created_at, updated_at
  FROM operations WHERE workspace_id = ? AND id = ?`)
)

// PrefetchJob implements ports.Tx: the event's first look and
// the operation's read, sent with the transaction's BEGIN and set_config
// when it is the transaction's first statement (pipelinedConn.sendBatch),
// as prepared statements, which PostgreSQL need not plan at every job as
// it plans the text bun sends (the event's over the outbox's partitions).
// On a pool not opened by OpenPool it reads nothing: the Gets do.
func (t *Tx) PrefetchJob(ctx context.Context, event, operation uuid.UUID) error {
	if t.conn == nil {
		return nil
	}
	b := &pgx.Batch{}
	from, to, near := outboxNearID(event, time.Now())
	if near {
		b.Queue(prefetchEvent, t.workspace, event, from, to)
	}
	b.Queue(prefetchOperation, t.workspace, operation)
	br, err := t.conn.sendBatch(ctx, b)
	if err != nil {
		return mapError(err, "operation")
	}
	p := &jobPrefetch{}
	if near {
		var r outboxRow
		err = br.QueryRow().Scan(&r.ID, &r.WorkspaceID, &r.EventType, &r.AggregateType, &r.AggregateID, &r.EventPayload,
			&r.Status, &r.AttemptCount, &r.NextAttemptAt, &r.LockedBy, &r.LockedUntil,
			&r.LastError, &r.Traceparent, &r.CreatedAt, &r.DispatchedAt,
			&r.Destination, &r.OrderingKey, &r.JobAttempts, &r.WaitKind, &r.WaitedFor, &r.FailedIn, &r.KeySeq)
		if err == nil {
			e := r.domain()
			p.event = &e
		}
	}
	if err == nil || errors.Is(err, pgx.ErrNoRows) {
		var r operationRow
		err = br.QueryRow().Scan(&r.ID, &r.WorkspaceID, &r.Kind, &r.Status, &r.ResourceType, &r.ResourceID, &r.Error,
			&r.CreatedBy, &r.CancelRequestedAt, &r.CreatedAt, &r.UpdatedAt)
		if err == nil {
			op := r.domain()
			p.operation = &op
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	if err = errors.Join(err, br.Close()); err != nil {
		return mapError(err, "operation")
	}
	*t.prefetch = *p
	return nil
}
