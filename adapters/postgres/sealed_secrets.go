package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The rows holding sealed secrets, for `once secrets reseal`: the
// workspaces through once_workspaces_after (sql/030_reseal_discovery.sql),
// then each workspace's stores and webhook endpoints under row-level
// security.

// SealedSecretWorkspaces implements ports.SealedSecretWorkspaces.
type SealedSecretWorkspaces struct{ db bun.IDB }

var _ ports.SealedSecretWorkspaces = (*SealedSecretWorkspaces)(nil)

// NewSealedSecretWorkspaces returns the listing on db, connected as the
// application role.
func NewSealedSecretWorkspaces(db bun.IDB) *SealedSecretWorkspaces {
	return &SealedSecretWorkspaces{db: db}
}

const selectWorkspacesAfter = `SELECT once_workspaces_after(?::uuid, ?::int)`

// WorkspacesAfter implements ports.SealedSecretWorkspaces.
func (w *SealedSecretWorkspaces) WorkspacesAfter(ctx context.Context, after uuid.UUID, limit int) ([]uuid.UUID, error) {
	if limit <= 0 {
		return nil, nil
	}
	var ids []uuid.UUID
	if err := w.db.NewRaw(selectWorkspacesAfter, after, limit).Scan(ctx, &ids); err != nil {
		return nil, mapError(err, "workspace")
	}
	return ids, nil
}

// SealedSecretRows implements ports.SealedSecretRows.
type SealedSecretRows struct {
	db        bun.IDB
	workspace uuid.UUID
}

var _ = ports.Register(kindRepositories, func(t *Tx) ports.SealedSecretRows {
	return &SealedSecretRows{db: t.db, workspace: t.workspace}
})

// lockedAfter is the page a re-seal batch reads: in id order through the
// primary key, FOR NO KEY UPDATE (a re-seal changes no key, so the rows
// that refer to these keep being written meanwhile; a change of the row
// itself waits).
func lockedAfter[D, R any, P taskRow[R, D]](ctx context.Context, db bun.IDB, workspace, after uuid.UUID, limit int, noun string) ([]D, error) {
	var rows []R
	err := db.NewSelect().Model(&rows).Where("workspace_id = ? AND id > ?", workspace, after).
		OrderExpr("id").Limit(int64(limit)).For("NO KEY UPDATE").Scan(ctx)
	if err != nil {
		return nil, mapError(err, noun)
	}
	out := make([]D, 0, len(rows))
	for i := range rows {
		out = append(out, P(&rows[i]).domain())
	}
	return out, nil
}

// StoresAfter implements ports.SealedSecretRows.
func (r *SealedSecretRows) StoresAfter(ctx context.Context, after uuid.UUID, limit int) ([]model.Store, error) {
	return lockedAfter[model.Store, storeRow](ctx, r.db, r.workspace, after, limit, "store")
}

// WebhookEndpointsAfter implements ports.SealedSecretRows.
func (r *SealedSecretRows) WebhookEndpointsAfter(ctx context.Context, after uuid.UUID, limit int) ([]model.WebhookEndpoint, error) {
	return lockedAfter[model.WebhookEndpoint, webhookEndpointRow](ctx, r.db, r.workspace, after, limit, "webhook endpoint")
}
