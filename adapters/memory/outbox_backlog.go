package memory

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

var _ ports.OutboxBacklog = (*OutboxDiscovery)(nil)

// Backlog counts committed events that are not dispatched, per workspace
// after the cursor, in id order, like the PostgreSQL function.
func (d *OutboxDiscovery) Backlog(_ context.Context, now time.Time, after uuid.UUID, limit int) ([]ports.WorkspaceBacklog, error) {
	if now.IsZero() {
		now = time.Now()
	}
	d.db.mu.Lock()
	defer d.db.mu.Unlock()
	byWorkspace := map[uuid.UUID]*ports.WorkspaceBacklog{}
	oldest := map[uuid.UUID]time.Time{}
	for _, row := range d.db.events {
		e := row.event
		if e.Status == model.OutboxDispatched || slices.Compare(e.WorkspaceID[:], after[:]) <= 0 {
			continue
		}
		b := byWorkspace[e.WorkspaceID]
		if b == nil {
			b = &ports.WorkspaceBacklog{Workspace: e.WorkspaceID}
			byWorkspace[e.WorkspaceID] = b
		}
		switch e.Status {
		case model.OutboxPending:
			b.Pending++
		case model.OutboxDispatching:
			b.Dispatching++
		case model.OutboxDeadLetter:
			b.DeadLetter++
		}
		if at, ok := dueAt(e, now); ok && (oldest[e.WorkspaceID].IsZero() || at.Before(oldest[e.WorkspaceID])) {
			oldest[e.WorkspaceID] = at
		}
	}
	out := make([]ports.WorkspaceBacklog, 0, len(byWorkspace))
	for ws, b := range byWorkspace {
		if at := oldest[ws]; !at.IsZero() {
			b.OldestDueAge = max(now.Sub(at), 0)
		}
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b ports.WorkspaceBacklog) int { return slices.Compare(a.Workspace[:], b.Workspace[:]) })
	return out[:min(len(out), max(limit, 0))], nil
}
