package postgres

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// The partition maintenance of sql/009_outbox_partitions.sql: SECURITY
// DEFINER functions owned by the schema owner, the only DDL the
// application role can cause, and only on outbox_events_dispatched.
const (
	prepareOutboxPartitions  = `SELECT once_outbox_prepare_partitions(?::timestamptz, ?::float8 * interval '1 second', ?::int)`
	dropDispatchedPartitions = `SELECT partitions, events, rows_before FROM once_outbox_drop_dispatched(?::timestamptz)`
)

// partitionsAhead is how many slices past the current one Prepare makes:
// with the default daily width, two days in which a maintenance that
// fails (a lock it could not get, a database restart) can try again
// before any event lands in the default partition.
const partitionsAhead = 2

// DefaultPartitionWidth is the default time slice of a partition of
// dispatched events.
const DefaultPartitionWidth = 24 * time.Hour

// OutboxPartitions implements ports.OutboxPartitions with range partitions
// of dispatched events, width wide. db must be connected as a role with
// once_dispatcher (the application role by default).
type OutboxPartitions struct {
	db    bun.IDB
	width time.Duration
}

var _ ports.OutboxPartitions = (*OutboxPartitions)(nil)

// NewOutboxPartitions returns the partition maintenance on db, with
// partitions width wide (DefaultPartitionWidth if <= 0). Every process of
// a deployment should use the same width: a slice that overlaps an
// existing partition is skipped, so a changed width takes effect at the
// first free slice.
func NewOutboxPartitions(db bun.IDB, width time.Duration) *OutboxPartitions {
	if width <= 0 {
		width = DefaultPartitionWidth
	}
	return &OutboxPartitions{db: db, width: width}
}

// Prepare implements ports.OutboxPartitions.
func (p *OutboxPartitions) Prepare(ctx context.Context, now time.Time) (int, error) {
	if now.IsZero() {
		now = time.Now()
	}
	var made int
	err := p.db.NewRaw(prepareOutboxPartitions, now, p.width.Seconds(), partitionsAhead).Scan(ctx, &made)
	return made, mapError(err, "outbox partition")
}

// DropDispatchedBefore implements ports.OutboxPartitions.
func (p *OutboxPartitions) DropDispatchedBefore(ctx context.Context, before time.Time) (int, time.Time, error) {
	if before.IsZero() {
		return 0, before, domain.Errorf(domain.CodeValidation, "a retention horizon is needed")
	}
	var row struct {
		Partitions int       `bun:"partitions"`
		Events     int64     `bun:"events"`
		RowsBefore time.Time `bun:"rows_before"`
	}
	if err := p.db.NewRaw(dropDispatchedPartitions, before).Scan(ctx, &row); err != nil {
		return 0, before, mapError(err, "outbox partition")
	}
	return int(row.Events), row.RowsBefore, nil
}
