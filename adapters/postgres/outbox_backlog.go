package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

var _ ports.OutboxBacklog = (*OutboxDiscovery)(nil)

// selectBacklog calls the SECURITY DEFINER function of
// sql/006_outbox_backlog.sql: workspace ids and counts, never rows.
const selectBacklog = `SELECT workspace_id, pending, dispatching, dead_letter, oldest_due_at
  FROM once_outbox_backlog(?::timestamptz, ?::uuid, ?::int)`

// Backlog implements ports.OutboxBacklog.
func (d *OutboxDiscovery) Backlog(ctx context.Context, now time.Time, after uuid.UUID, limit int) ([]ports.WorkspaceBacklog, error) {
	if limit <= 0 {
		return nil, nil
	}
	if now.IsZero() {
		now = time.Now()
	}
	var rows []struct {
		WorkspaceID uuid.UUID  `bun:"workspace_id"`
		Pending     int64      `bun:"pending"`
		Dispatching int64      `bun:"dispatching"`
		DeadLetter  int64      `bun:"dead_letter"`
		OldestDueAt *time.Time `bun:"oldest_due_at"`
	}
	if err := d.db.NewRaw(selectBacklog, now, after, limit).Scan(ctx, &rows); err != nil {
		return nil, mapError(err, "outbox backlog")
	}
	out := make([]ports.WorkspaceBacklog, len(rows))
	for i, r := range rows {
		out[i] = ports.WorkspaceBacklog{Workspace: r.WorkspaceID, Pending: r.Pending, Dispatching: r.Dispatching, DeadLetter: r.DeadLetter}
		if r.OldestDueAt != nil {
			out[i].OldestDueAge = max(now.Sub(*r.OldestDueAt), 0)
		}
	}
	return out, nil
}
