package memory

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

// Discovery finds workspaces with expired idempotency records across the
// whole DB. It returns ids only, like the SECURITY DEFINER function the
// PostgreSQL adapter calls.
type Discovery struct {
	db *DB
}

var _ ports.IdempotencyDiscovery = (*Discovery)(nil)

// NewDiscovery returns a discovery over db.
func NewDiscovery(db *DB) *Discovery {
	return &Discovery{db: db}
}

// WorkspacesWithExpiredIdempotency returns up to limit distinct workspaces
// with committed records that expired before now, in id order.
func (d *Discovery) WorkspacesWithExpiredIdempotency(_ context.Context, now time.Time, limit int) ([]uuid.UUID, error) {
	d.db.mu.Lock()
	defer d.db.mu.Unlock()
	seen := map[uuid.UUID]bool{}
	var ids []uuid.UUID
	for scope, row := range d.db.idem {
		if row.record.ExpiresAt.Before(now) && !seen[scope.WorkspaceID] {
			seen[scope.WorkspaceID] = true
			ids = append(ids, scope.WorkspaceID)
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return ids[:min(len(ids), max(limit, 0))], nil
}
