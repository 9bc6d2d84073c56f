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
	event     prefetched[model.OutboxEvent]
	operation prefetched[model.Operation]
	store     prefetched[model.Store]
}

// prefetched is one row read ahead, until it is taken.
type prefetched[T any] struct {
	id  uuid.UUID
	row *T
}

func (p *prefetched[T]) keep(id uuid.UUID, row T) { p.id, p.row = id, &row }

// take is the row if it is id's and was not taken yet.
func (p *prefetched[T]) take(id uuid.UUID) (T, bool) {
	if p.row == nil || p.id != id {
		var none T
		return none, false
	}
	row := *p.row
	p.row = nil
	return row, true
}

var (
	// prefetchEvent is Get's first look (outboxNear) in a shape whose one
	// generic plan stays narrow: the queue's and the dead letters'
	// statuses are constants, pruned when it is planned, and the bounds
	// prune the dispatched slices when it runs. Each partition's read is
	// one probe of its (workspace_id, id) index (sql/033), which the
	// planner takes whatever the partition's statistics.
	prefetchEvent = pgxPlaceholders(`SELECT ` + outboxEventColumns + `, key_seq
  FROM outbox_events
 WHERE workspace_id = ?0 AND id = ?1 AND status IN ('pending', 'dispatching', 'dead_letter')
UNION ALL
SELECT ` + outboxEventColumns + `, key_seq
  FROM outbox_events
 WHERE workspace_id = ?0 AND id = ?1 AND status = 'dispatched' AND dispatched_at >= ?2 AND dispatched_at < ?3`)
	prefetchOperation = numberedPlaceholders(`SELECT ` + operationColumns + `
  FROM operations WHERE workspace_id = ? AND id = ?`)
	// prefetchStore is the store the operation tracks, if it tracks one
	// (a verification's): what its job's step 1 reads next.
	prefetchStore = pgxPlaceholders(`SELECT ` + storeColumns + `
  FROM stores
 WHERE workspace_id = ?0
   AND id = (SELECT resource_id FROM operations WHERE workspace_id = ?0 AND id = ?1 AND resource_type = 'store')`)
	// prefetchEndpoints is whether the workspace has an enabled webhook
	// endpoint (webhook_presence.go), as updateOperation returns it.
	prefetchEndpoints = numberedPlaceholders(`SELECT EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.workspace_id = ? AND w.enabled)`)
)

// PrefetchJob implements ports.Tx: the event's first look, the
// operation's read and its store's, in one round trip, with the
// transaction's BEGIN and set_config when it is the transaction's first
// statement (pipelinedConn.sendBatch), as statements prepared once per
// connection. On a pool not opened by OpenPool it reads nothing: the Gets
// do.
func (t *Tx) PrefetchJob(ctx context.Context, event, operation uuid.UUID) error {
	return t.prefetchJob(ctx, event, operation, false)
}

// PrefetchJobEnd implements ports.Tx: as PrefetchJob, with the
// workspace's webhook endpoints' presence instead of the event. Read at
// the transaction's start rather than by the operation's UPDATE
// (webhook_presence.go), it is known before that UPDATE is sent, which
// then goes with the COMMIT (ports.WithRefusalsAtCommit).
func (t *Tx) PrefetchJobEnd(ctx context.Context, operation uuid.UUID) error {
	return t.prefetchJob(ctx, uuid.Nil, operation, true)
}

// prefetchJob reads the rows of PrefetchJob (the event if not uuid.Nil)
// and, if endpoints, the webhook endpoints' presence.
func (t *Tx) prefetchJob(ctx context.Context, event, operation uuid.UUID, endpoints bool) error {
	if t.conn == nil {
		return nil
	}
	b := &pgx.Batch{}
	from, to, near := outboxNearID(event, time.Now())
	near = near && event != uuid.Nil
	if near {
		b.Queue(prefetchEvent, t.workspace, event, from, to)
	}
	b.Queue(prefetchOperation, t.workspace, operation)
	b.Queue(prefetchStore, t.workspace, operation)
	if endpoints {
		b.Queue(prefetchEndpoints, t.workspace)
	}
	p := &jobPrefetch{}
	enabled := false
	scan := func(br pgx.BatchResults) error {
		var err error
		if near {
			var r outboxRow
			err = br.QueryRow().Scan(&r.ID, &r.WorkspaceID, &r.EventType, &r.AggregateType, &r.AggregateID, &r.EventPayload,
				&r.Status, &r.AttemptCount, &r.NextAttemptAt, &r.LockedBy, &r.LockedUntil,
				&r.LastError, &r.Traceparent, &r.CreatedAt, &r.DispatchedAt,
				&r.Destination, &r.OrderingKey, &r.JobAttempts, &r.WaitKind, &r.WaitedFor, &r.FailedIn, &r.KeySeq)
			if err == nil {
				p.event.keep(r.ID, r.domain())
			}
		}
		if err == nil || errors.Is(err, pgx.ErrNoRows) {
			var r operationRow
			err = br.QueryRow().Scan(&r.ID, &r.WorkspaceID, &r.Kind, &r.Status, &r.ResourceType, &r.ResourceID, &r.Error,
				&r.CreatedBy, &r.CancelRequestedAt, &r.CreatedAt, &r.UpdatedAt)
			if err == nil {
				p.operation.keep(r.ID, r.domain())
			}
		}
		if err == nil || errors.Is(err, pgx.ErrNoRows) {
			var r storeRow
			err = br.QueryRow().Scan(r.dest()...)
			if err == nil {
				p.store.keep(r.ID, r.domain())
			}
		}
		if (err == nil || errors.Is(err, pgx.ErrNoRows)) && endpoints {
			err = br.QueryRow().Scan(&enabled)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
		return err
	}
	// Each planned once per connection (params.go); a job step's in a
	// batch of its pool's read group (pipelinedConn.readFirst).
	if err := t.conn.readFirst(ctx, b, scan); err != nil {
		return mapError(err, "operation")
	}
	*t.prefetch = *p
	if endpoints {
		t.endpoints.saw(enabled)
	}
	return nil
}

// Get implements ports.StoreRepository: the store PrefetchJob read, the
// first time, else a read with parameters (params.go): on a connection of
// ours with the transaction's BEGIN when it is its first statement, as
// at a verification's end.
func (r *StoreRepository) Get(ctx context.Context, id uuid.UUID) (model.Store, error) {
	if r.prefetch != nil {
		if s, ok := r.prefetch.store.take(id); ok {
			return s, nil
		}
	}
	var row storeRow
	if err := r.params.queryRow(ctx, selectStoreNumbered, []any{pgxUUID(r.workspace), pgxUUID(id)}, row.dest()...); err != nil {
		return model.Store{}, mapError(err, r.noun)
	}
	return row.domain(), nil
}

// dest is where a row of storeColumns is scanned.
func (r *storeRow) dest() []any {
	return []any{&r.ID, &r.WorkspaceID, &r.Platform, &r.Name, &r.ExternalShopID, &r.Status,
		&r.CredentialVersion, &r.SealedCredentials, &r.CreatedAt, &r.UpdatedAt}
}
