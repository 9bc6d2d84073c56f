package ports

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// WebhookEndpointRepository stores a workspace's webhook endpoints. Tx
// hands it out through Repository, as it does a kind's repository. List
// is newest first, as every list (ListQuery; its filters do not apply).
type WebhookEndpointRepository interface {
	Resources[model.WebhookEndpoint]
	// Update replaces the mutable fields (URL, event types, enabled, the
	// secret version, both sealed secrets, the previous one's expiry,
	// updated_at); domain.CodeNotFound if absent.
	Update(ctx context.Context, e model.WebhookEndpoint) error
	// Change reads the endpoint id, applies fn to it and saves the mutable
	// fields fn left (as Update), holding the row from the read to the
	// write: of two transactions changing one endpoint, the second reads
	// what the first saved (it waits for the first to end). It returns the
	// endpoint as saved; domain.CodeNotFound if absent; fn's error as it
	// is, with nothing saved.
	Change(ctx context.Context, id uuid.UUID, fn func(e *model.WebhookEndpoint) error) (model.WebhookEndpoint, error)
	// CountLocked holds the workspace's set of endpoints until the
	// transaction ends (of two transactions taking it, the second waits
	// for the first to end and then counts what it wrote), and counts
	// them: how many there are, and one other than except whose URL is
	// url (uuid.Nil: none). A create or a URL change takes it first, so
	// that parallel ones cannot pass the workspace's cap or write one URL
	// twice.
	CountLocked(ctx context.Context, url string, except uuid.UUID) (WebhookEndpointCount, error)
	// Delete removes the endpoint; domain.CodeNotFound if absent.
	Delete(ctx context.Context, id uuid.UUID) error
	// Subscribed returns the workspace's enabled endpoints that receive
	// eventType, in no particular order (none: an empty list). It runs in
	// every transaction that ends an operation, so it reads one index.
	Subscribed(ctx context.Context, eventType string) ([]model.WebhookEndpoint, error)
}

// WebhookEndpointCount is what WebhookEndpointRepository.CountLocked read:
// the workspace's endpoints, and one that already has the URL asked
// about (uuid.Nil: none).
type WebhookEndpointCount struct {
	All     int
	SameURL uuid.UUID
}
