package memory

import (
	"bytes"
	"context"
	"errors"
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
	return webhookEndpointTable.update(r.t, e.ID, func(cur *model.WebhookEndpoint) { setMutable(cur, e) })
}

// setMutable copies what Update replaces.
func setMutable(cur *model.WebhookEndpoint, e model.WebhookEndpoint) {
	cur.URL, cur.EventTypes, cur.Enabled = e.URL, e.EventTypes, e.Enabled
	cur.SecretVersion, cur.SealedSecret = e.SecretVersion, e.SealedSecret
	cur.SealedPreviousSecret, cur.PreviousSecretExpiresAt = e.SealedPreviousSecret, e.PreviousSecretExpiresAt
	cur.UpdatedAt = e.UpdatedAt
}

func webhookEndpointRowLock(id uuid.UUID) uniqueKey {
	return uniqueKey{"webhook_endpoints_row", id.String()}
}

// Change takes the row's lock, as operationRepo.Update does, before it
// reads: a concurrent change waits until this transaction ends.
func (r webhookEndpointRepo) Change(ctx context.Context, id uuid.UUID, fn func(e *model.WebhookEndpoint) error) (model.WebhookEndpoint, error) {
	lock := webhookEndpointRowLock(id)
	var saved model.WebhookEndpoint
	for {
		if err := r.t.db.waitRowLock(ctx, r.t, lock); err != nil {
			return saved, err
		}
		err := webhookEndpointTable.change(r.t, id, func(cur *model.WebhookEndpoint) error {
			if !r.t.db.lockRowLocked(r.t, lock) {
				return errRowLocked // taken since the wait: wait again
			}
			next := copyWebhookEndpoint(*cur)
			if err := fn(&next); err != nil {
				return err
			}
			setMutable(cur, next)
			saved = copyWebhookEndpoint(*cur)
			return nil
		})
		if !errors.Is(err, errRowLocked) {
			return saved, err
		}
	}
}

// CountLocked takes the workspace's endpoint-set lock, as the PostgreSQL
// adapter's advisory lock, then counts what is committed and what t wrote.
func (r webhookEndpointRepo) CountLocked(ctx context.Context, url string, except uuid.UUID) (ports.WebhookEndpointCount, error) {
	lock := uniqueKey{"webhook_endpoints_of", r.t.workspace.String()}
	for {
		if err := r.t.db.waitRowLock(ctx, r.t, lock); err != nil {
			return ports.WebhookEndpointCount{}, err
		}
		err := r.t.inLock(func() error {
			if !r.t.db.lockRowLocked(r.t, lock) {
				return errRowLocked // taken since the wait: wait again
			}
			return nil
		})
		if err == nil {
			break
		}
		if !errors.Is(err, errRowLocked) {
			return ports.WebhookEndpointCount{}, err
		}
	}
	all, err := webhookEndpointTable.list(r.t, ports.ListQuery{Limit: math.MaxInt}, func(model.WebhookEndpoint, ports.ListQuery) bool { return true })
	if err != nil {
		return ports.WebhookEndpointCount{}, err
	}
	n := ports.WebhookEndpointCount{All: len(all)}
	for _, e := range all {
		if e.URL == url && e.ID != except {
			n.SameURL = e.ID
		}
	}
	return n, nil
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
