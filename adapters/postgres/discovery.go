package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/ports"
)

// Discovery implements ports.IdempotencyDiscovery through the SECURITY
// DEFINER function once_idempotency_expired_workspaces: the application role
// learns which workspaces have expired records, never the records, and
// needs no workspace context (nor any privileged pool) to ask.
type Discovery struct {
	db bun.IDB
}

var _ ports.IdempotencyDiscovery = (*Discovery)(nil)

// NewDiscovery returns a Discovery on db, connected as the application role.
func NewDiscovery(db bun.IDB) *Discovery { return &Discovery{db: db} }

// WorkspacesWithExpiredIdempotency implements ports.IdempotencyDiscovery.
func (d *Discovery) WorkspacesWithExpiredIdempotency(ctx context.Context, now time.Time, limit int) ([]uuid.UUID, error) {
	if limit <= 0 {
		return nil, nil
	}
	if now.IsZero() {
		now = time.Now()
	}
	var ids []uuid.UUID
	if err := d.db.NewRaw(selectExpiredWorkspaces, now, limit).Scan(ctx, &ids); err != nil {
		return nil, mapError(err, "workspace")
	}
	return ids, nil
}
