package memory

import (
	"bytes"
	"context"
	"math"
	"slices"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// webhookEndpointRepo is the webhook_endpoints table in one transaction.
type webhookEndpointRepo struct {
	tableRepo[model.WebhookEndpoint]
}

var _ = ports.Register(kindRepositories, func(t *tx) ports.WebhookEndpointRepository {
	return webhookEndpointRepo{webhookEndpointTable.in(t)}
})

var webhookEndpointTable = table[model.WebhookEndpoint]{
	noun: "webhook endpoint", pkey: "webhook_endpoints_pkey", copy: copyWebhookEndpoint,
	rows: newRows[uuid.UUID, model.WebhookEndpoint](),
	ids:  func(e model.WebhookEndpoint) (uuid.UUID, uuid.UUID) { return e.ID, e.WorkspaceID },
}

func copyWebhookEndpoint(e model.WebhookEndpoint) model.WebhookEndpoint {
	e.EventTypes = slices.Clone(e.EventTypes)
	e.SealedSecret = bytes.Clone(e.SealedSecret)
	e.SealedPreviousSecret = bytes.Clone(e.SealedPreviousSecret)
	dbTimes(&e.PreviousSecretExpiresAt, &e.CreatedAt, &e.UpdatedAt)
	return e
}

func (r webhookEndpointRepo) Update(_ context.Context, e model.WebhookEndpoint) error {
	return webhookEndpointTable.update(r.t, e.ID, func(cur *model.WebhookEndpoint) {
		cur.URL, cur.EventTypes, cur.Enabled = e.URL, e.EventTypes, e.Enabled
		cur.SecretVersion, cur.SealedSecret = e.SecretVersion, e.SealedSecret
		cur.SealedPreviousSecret, cur.PreviousSecretExpiresAt = e.SealedPreviousSecret, e.PreviousSecretExpiresAt
		cur.UpdatedAt = e.UpdatedAt
	})
}

// Delete moves the row out of every workspace: the memory tables keep
// no deletions, and a row of no workspace is one no transaction sees
// (table.visibleLocked), which is what a deleted row is. Its id stays
// reserved, as a UUID is never reused anyway.
func (r webhookEndpointRepo) Delete(_ context.Context, id uuid.UUID) error {
	return webhookEndpointTable.update(r.t, id, func(cur *model.WebhookEndpoint) { cur.WorkspaceID = uuid.Nil })
}

func (r webhookEndpointRepo) List(_ context.Context, q ports.ListQuery) ([]model.WebhookEndpoint, error) {
	return webhookEndpointTable.list(r.t, q, func(model.WebhookEndpoint, ports.ListQuery) bool { return true })
}

func (r webhookEndpointRepo) Subscribed(_ context.Context, eventType string) ([]model.WebhookEndpoint, error) {
	all, err := webhookEndpointTable.list(r.t, ports.ListQuery{Limit: math.MaxInt}, func(e model.WebhookEndpoint, _ ports.ListQuery) bool {
		return e.Enabled && slices.Contains(e.EventTypes, eventType)
	})
	if all == nil {
		all = []model.WebhookEndpoint{}
	}
	return all, err
}
