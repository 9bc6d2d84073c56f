package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Outbox implements ports.Outbox for one transaction: events are written in
// the business transaction, so they commit or vanish with the business rows.
type Outbox struct {
	db        bun.IDB
	workspace uuid.UUID
	// prefetch holds the event PrefetchJob read, if any; nil outside a
	// Tx.
	prefetch *jobPrefetch
}

var _ ports.Outbox = (*Outbox)(nil)

// Append implements ports.Outbox. Every event is checked before anything is
// written, so a refused batch writes nothing.
func (o *Outbox) Append(ctx context.Context, events ...model.OutboxEvent) error {
	if len(events) == 0 {
		return nil
	}
	rows := make([]*outboxRow, 0, len(events))
	for _, e := range events {
		if e.WorkspaceID != o.workspace {
			return domain.Errorf(domain.CodeForbidden, "outbox event %s belongs to another workspace", e.ID)
		}
		if e.JobAttempts < 0 {
			return domain.Errorf(domain.CodeValidation, "outbox event %s: a job's attempts cannot be negative", e.ID)
		}
		if err := model.CheckPayloadSafe(e.Payload); err != nil {
			return err
		}
		rows = append(rows, toOutboxRow(e))
	}
	if err := o.orderByKey(ctx, rows); err != nil {
		return err
	}
	_, err := o.db.NewInsert().Model(&rows).Exec(ctx)
	return mapError(err, "outbox event")
}

// orderByKey gives each row with an ordering key its key_seq, drawn while
// the transaction holds its keys' locks (lockOrderingKeys), so that within
// a key key_seq order is commit order. One round trip, and none for a
// batch without keys.
func (o *Outbox) orderByKey(ctx context.Context, rows []*outboxRow) error {
	var keys []string
	for _, r := range rows {
		if r.OrderingKey != nil {
			keys = append(keys, *r.OrderingKey)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	var seqs []int64
	err := o.db.NewRaw(lockOrderingKeys, o.workspace.String(), pgdialect.Array(keys), len(keys)).Scan(ctx, &seqs)
	if err != nil {
		return mapError(err, "outbox event")
	}
	if len(seqs) != len(keys) {
		return domain.Errorf(domain.CodeInternal, "outbox: %d ordering sequence values for %d events", len(seqs), len(keys))
	}
	i := 0
	for _, r := range rows {
		if r.OrderingKey != nil {
			r.KeySeq = &seqs[i]
			i++
		}
	}
	return nil
}

// Get implements ports.Outbox.
//
// outbox_events has no index on id across its partitions (it is
// partitioned by status, its dispatched part by dispatched_at), so a
// lookup by id alone plans and probes every partition, one per slice of
// retained history. Get looks first where the event almost always is
// (outboxNearID): the queue, the dead letters, and the dispatched slices
// between its id's time and now, which the planner prunes to one or two.
// Only if that finds nothing (an id that is no UUIDv7, clocks far apart,
// or no such event: a forged message) does it look everywhere, so its
// answer is the same as a lookup of every partition.
func (o *Outbox) Get(ctx context.Context, id uuid.UUID) (model.OutboxEvent, error) {
	if o.prefetch != nil {
		if event, ok := o.prefetch.event.take(id); ok {
			return event, nil
		}
	}
	if from, to, ok := outboxNearID(id, time.Now()); ok {
		event, err := selectRow[model.OutboxEvent, outboxRow](ctx, o.db, "outbox event", outboxNear, o.workspace, id, from, to)
		if !domain.IsCode(err, domain.CodeNotFound) {
			return event, err
		}
	}
	return getRow[model.OutboxEvent, outboxRow](ctx, o.db, o.workspace, id, "outbox event")
}

// outboxNear is Get's first look: an event of the queue or of the dead
// letters (live and dead, each unique on id), or one dispatched between
// the bounds, whose constants let the planner keep only the slices they
// cover (and drop the default slice when those cover them).
const outboxNear = `workspace_id = ? AND id = ?
 AND (status IN ('pending', 'dispatching', 'dead_letter')
      OR (status = 'dispatched' AND dispatched_at >= ? AND dispatched_at < ?))`

// outboxClockSlack is how far apart the clocks of the process that made
// an event's id, the one that marked it dispatched and this one may be
// for outboxNear to find it; beyond that Get looks everywhere.
const outboxClockSlack = 5 * time.Minute

// outboxNearID is where outboxNear looks for the event id, made at the
// time a UUIDv7 carries: dispatched at or after it, and not after now
// (both widened by outboxClockSlack). False for an id of another
// version, which says nothing of its time.
func outboxNearID(id uuid.UUID, now time.Time) (from, to time.Time, ok bool) {
	if id.Version() != 7 {
		return from, to, false
	}
	sec, nsec := id.Time().UnixTime()
	made := time.Unix(sec, nsec)
	return made.Add(-outboxClockSlack), now.Add(outboxClockSlack), true
}

// List implements ports.Outbox: oldest first (created_at, then id, which is
// time-ordered), at most limit events; limit <= 0 returns none.
func (o *Outbox) List(ctx context.Context, status model.OutboxStatus, limit int) ([]model.OutboxEvent, error) {
	if limit <= 0 {
		return []model.OutboxEvent{}, nil
	}
	var rows []outboxRow
	q := o.db.NewSelect().Model(&rows).Where("workspace_id = ?", o.workspace)
	if status != "" {
		q = q.Where("status = ?", string(status))
	}
	if err := q.OrderExpr("created_at, id").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, mapError(err, "outbox event")
	}
	out := make([]model.OutboxEvent, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}
