package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The webhook endpoints of one transaction: the webhook_endpoints table of
// sql/019_webhook_endpoints.sql.

// WebhookEndpointRepository implements ports.WebhookEndpointRepository.

type webhookEndpointTable = taskRepo[model.WebhookEndpoint, webhookEndpointRow, *webhookEndpointRow]

type WebhookEndpointRepository struct {
	webhookEndpointTable
	// endpoints is what the transaction's operation UPDATEs said of the
	// workspace's endpoints (webhook_presence.go).
	endpoints *endpointPresence
}

var _ = ports.Register(kindRepositories, func(t *Tx) ports.WebhookEndpointRepository {
	return &WebhookEndpointRepository{webhookEndpointTable{t.db, t.workspace, "webhook endpoint"}, t.endpoints}
})

func (r *WebhookEndpointRepository) Create(ctx context.Context, e model.WebhookEndpoint) error {
	r.endpoints.forget()
	return r.insert(ctx, toWebhookEndpointRow(e))
}

var updateWebhookEndpoint = updateTaskRow("webhook_endpoints",
	"url = ?", "event_types = ?::text[]", "enabled = ?", "secret_version = ?", "sealed_secret = ?",
	"sealed_previous_secret = ?", "previous_secret_expires_at = ?")

func (r *WebhookEndpointRepository) Update(ctx context.Context, e model.WebhookEndpoint) error {
	r.endpoints.forget()
	row := toWebhookEndpointRow(e)
	return r.update(ctx, updateWebhookEndpoint,
		row.URL, pgdialect.Array(row.EventTypes), row.Enabled, row.SecretVersion, row.SealedSecret,
		row.SealedPreviousSecret, row.PreviousSecretExpiresAt, row.UpdatedAt, r.workspace, e.ID)
}

// Change reads the row FOR UPDATE: a concurrent change of the endpoint
// waits at its own read until this transaction ends, then reads what it
// saved.
func (r *WebhookEndpointRepository) Change(ctx context.Context, id uuid.UUID, fn func(e *model.WebhookEndpoint) error) (model.WebhookEndpoint, error) {
	r.endpoints.forget()
	var row webhookEndpointRow
	err := r.db.NewSelect().Model(&row).Where("workspace_id = ? AND id = ?", r.workspace, id).For("UPDATE").Scan(ctx)
	if err != nil {
		return model.WebhookEndpoint{}, mapError(err, r.noun)
	}
	read := row.domain()
	e := row.domain()
	if err := fn(&e); err != nil {
		return e, err
	}
	// What Update does not replace stays as read.
	e.ID, e.WorkspaceID, e.CreatedAt = read.ID, read.WorkspaceID, read.CreatedAt
	return e, r.Update(ctx, e)
}

// lockWebhookEndpointSet serializes, per workspace, the writes that
// count the endpoints first (a create, a URL change): the lock lasts
// until the transaction ends, so the next one's count, a statement of
// its own taken after the lock, sees what the first wrote. Not the
// workspace's row FOR UPDATE: that waits for every write of the workspace
// whose foreign key share-locks it.
const lockWebhookEndpointSet = `SELECT pg_advisory_xact_lock(hashtextextended('once.webhook_endpoints:' || ?::text, 0))`

// countWebhookEndpoints reads the workspace's endpoints through
// webhook_endpoints_workspace_id_idx (a workspace has few: the cap).
const countWebhookEndpoints = `
SELECT count(*), (array_agg(id) FILTER (WHERE url = ? AND id <> ?))[1]
  FROM webhook_endpoints
 WHERE workspace_id = ?`

func (r *WebhookEndpointRepository) CountLocked(ctx context.Context, url string, except uuid.UUID) (ports.WebhookEndpointCount, error) {
	if _, err := r.db.NewRaw(lockWebhookEndpointSet, r.workspace).Exec(ctx); err != nil {
		return ports.WebhookEndpointCount{}, mapError(err, r.noun)
	}
	var n ports.WebhookEndpointCount
	var same uuid.NullUUID
	if err := r.db.NewRaw(countWebhookEndpoints, url, except, r.workspace).Scan(ctx, &n.All, &same); err != nil {
		return ports.WebhookEndpointCount{}, mapError(err, r.noun)
	}
	n.SameURL = same.UUID
	return n, nil
}

const deleteWebhookEndpoint = `DELETE FROM webhook_endpoints WHERE workspace_id = ? AND id = ?`

func (r *WebhookEndpointRepository) Delete(ctx context.Context, id uuid.UUID) error {
	r.endpoints.forget()
	return r.update(ctx, deleteWebhookEndpoint, r.workspace, id)
}

// List is newest first by id (UUIDv7), through webhook_endpoints_workspace_id_idx.
func (r *WebhookEndpointRepository) List(ctx context.Context, q ports.ListQuery) ([]model.WebhookEndpoint, error) {
	return listNewest(ctx, r.db, r.workspace, q, "webhook endpoint", plain((*webhookEndpointRow).domain))
}

type webhookEndpointRow struct {
	bun.BaseModel `bun:"table:webhook_endpoints"`

	rowKeys
	URL                     string     `bun:"url,notnull"`
	EventTypes              []string   `bun:"event_types,array,type:text[]"`
	Enabled                 bool       `bun:"enabled,notnull"`
	SecretVersion           int        `bun:"secret_version,notnull"`
	SealedSecret            []byte     `bun:"sealed_secret,notnull"`
	SealedPreviousSecret    []byte     `bun:"sealed_previous_secret"`
	PreviousSecretExpiresAt *time.Time `bun:"previous_secret_expires_at"`
	rowTimes
}

func toWebhookEndpointRow(e model.WebhookEndpoint) *webhookEndpointRow {
	events := e.EventTypes
	if events == nil {
		events = []string{}
	}
	return &webhookEndpointRow{
		rowKeys: rowKeys{e.ID, e.WorkspaceID}, URL: e.URL, EventTypes: events, Enabled: e.Enabled,
		SecretVersion: e.SecretVersion, SealedSecret: e.SealedSecret,
		SealedPreviousSecret: e.SealedPreviousSecret, PreviousSecretExpiresAt: timePtr(e.PreviousSecretExpiresAt),
		rowTimes: toRowTimes(e.CreatedAt, e.UpdatedAt),
	}
}

func (r *webhookEndpointRow) domain() model.WebhookEndpoint {
	var events []string
	if len(r.EventTypes) > 0 {
		events = r.EventTypes
	}
	return model.WebhookEndpoint{
		ID: r.ID, WorkspaceID: r.WorkspaceID, URL: r.URL, EventTypes: events, Enabled: r.Enabled,
		SecretVersion: r.SecretVersion, SealedSecret: r.SealedSecret,
		SealedPreviousSecret: r.SealedPreviousSecret, PreviousSecretExpiresAt: timeVal(r.PreviousSecretExpiresAt),
		CreatedAt: timeVal(r.CreatedAt), UpdatedAt: timeVal(r.UpdatedAt),
	}
}

// selectSubscribed reads the endpoints an event goes to. It runs in the
// transaction of every operation's end: webhook_endpoints_workspace_id_idx
// finds the workspace's few endpoints, the rest is a filter on them.
const selectSubscribed = `
SELECT * FROM webhook_endpoints
 WHERE workspace_id = ? AND enabled AND ? = ANY (event_types)`

func (r *WebhookEndpointRepository) Subscribed(ctx context.Context, eventType string) ([]model.WebhookEndpoint, error) {
	if r.endpoints.none() {
		return []model.WebhookEndpoint{}, nil
	}
	var rows []webhookEndpointRow
	if err := r.db.NewRaw(selectSubscribed, r.workspace, eventType).Scan(ctx, &rows); err != nil {
		return nil, mapError(err, "webhook endpoint")
	}
	out := make([]model.WebhookEndpoint, 0, len(rows))
	for i := range rows {
		out = append(out, rows[i].domain())
	}
	return out, nil
}
