package operator

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// MaxWebhookEndpoints bounds how many endpoints one view of the webhook
// deliveries shows, over all workspaces; a view that stops there says so.
const MaxWebhookEndpoints = 500

// webhookRead bounds the deliveries one workspace's counts read
// (ports.Outbox.UndeliveredByDestination), as MaxDeadLetters bounds a view
// of the dead letters.
const webhookRead = MaxDeadLetters

// webhookPrefix is the destinations of the webhook deliveries
// (model.WebhookDestination).
const webhookPrefix = "webhook/"

// WebhookEndpoint is the deliveries to one endpoint that are not done:
// waiting for their next attempt, or given up on (dead letters, re-driven
// like any other).
type WebhookEndpoint struct {
	Workspace uuid.UUID
	Endpoint  uuid.UUID
	// Host is the host (and port) of the endpoint's URL, never its path or
	// query, which may carry a token. Empty when the endpoint was deleted.
	Host string
	// Enabled is the endpoint's switch; a disabled or deleted endpoint's
	// deliveries are dropped when their turn comes.
	Enabled bool
	// Deleted says the endpoint no longer exists.
	Deleted bool
	// Waiting and DeadLetter count its deliveries pending or in an
	// attempt, and given up on.
	Waiting, DeadLetter int
	// OldestWaiting is when the oldest waiting delivery was created (zero
	// when none waits); NextAttempt, the soonest due (zero when none).
	OldestWaiting, NextAttempt time.Time
	// LastError is the last error of its newest delivery that has one,
	// sanitized.
	LastError string
}

// Webhooks is every workspace's endpoints with deliveries not done.
type Webhooks struct {
	// Endpoints, the most deliveries not done first (then by workspace and
	// endpoint).
	Endpoints []WebhookEndpoint
	// Waiting and DeadLetter are the endpoints' totals.
	Waiting, DeadLetter int
	// Truncated says some deliveries or endpoints are not counted: more
	// workspaces than MaxWorkspaces, more endpoints than
	// MaxWebhookEndpoints, or a workspace with more deliveries not done
	// than one view reads (its counts are then lower bounds).
	Truncated bool
}

// Webhooks reads, in every workspace with outbox work (discovered through
// the backlog) and in a unit of work scoped to it, the webhook deliveries
// that are not done, counted per endpoint, and the endpoints they go to.
func (c *Console) Webhooks(ctx context.Context) (Webhooks, error) {
	backlog, err := c.Backlog(ctx)
	if err != nil {
		return Webhooks{}, err
	}
	out := Webhooks{Truncated: backlog.Truncated}
	for _, w := range backlog.Workspaces {
		room := MaxWebhookEndpoints - len(out.Endpoints)
		if room == 0 {
			out.Truncated = true
			break
		}
		read, err := ports.Query(ctx, c.uow, w.Workspace, func(ctx context.Context, tx ports.Tx) (workspaceWebhooks, error) {
			return readWebhooks(ctx, tx, w.Workspace)
		})
		if err != nil {
			return Webhooks{}, err
		}
		if len(read.endpoints) > room {
			read.endpoints, read.truncated = read.endpoints[:room], true
		}
		out.Truncated = out.Truncated || read.truncated
		for _, e := range read.endpoints {
			out.Waiting += e.Waiting
			out.DeadLetter += e.DeadLetter
		}
		out.Endpoints = append(out.Endpoints, read.endpoints...)
	}
	slices.SortStableFunc(out.Endpoints, func(a, b WebhookEndpoint) int {
		return cmp.Or(cmp.Compare(b.Waiting+b.DeadLetter, a.Waiting+a.DeadLetter),
			slices.Compare(a.Workspace[:], b.Workspace[:]), slices.Compare(a.Endpoint[:], b.Endpoint[:]))
	})
	return out, nil
}

// workspaceWebhooks is what one workspace's read found.
type workspaceWebhooks struct {
	endpoints []WebhookEndpoint
	truncated bool
}

// readWebhooks counts a workspace's deliveries not done per endpoint, in
// tx, and reads each endpoint they go to.
func readWebhooks(ctx context.Context, tx ports.Tx, workspace uuid.UUID) (workspaceWebhooks, error) {
	counts, err := tx.Outbox().UndeliveredByDestination(ctx, webhookPrefix, webhookRead)
	if err != nil {
		return workspaceWebhooks{}, err
	}
	var out workspaceWebhooks
	read := 0
	for _, d := range counts {
		read += d.Waiting + d.DeadLetter
		id, err := uuid.Parse(strings.TrimPrefix(d.Destination, webhookPrefix))
		if err != nil {
			continue // not an endpoint's: written by something else
		}
		e := WebhookEndpoint{Workspace: workspace, Endpoint: id, Waiting: d.Waiting, DeadLetter: d.DeadLetter,
			OldestWaiting: d.OldestWaiting, NextAttempt: d.NextAttempt, LastError: domain.SanitizeText(d.LastError)}
		endpoint, err := ports.Repository[ports.WebhookEndpointRepository](tx).Get(ctx, id)
		switch {
		case domain.IsCode(err, domain.CodeNotFound):
			e.Deleted = true
		case err != nil:
			return workspaceWebhooks{}, err
		default:
			e.Host, e.Enabled = URLHost(endpoint.URL), endpoint.Enabled
		}
		out.endpoints = append(out.endpoints, e)
	}
	out.truncated = read >= webhookRead
	return out, nil
}

// URLHost is the host (and port) of raw, without its scheme, user, path,
// query or fragment: what an operator may see of a URL that may carry a
// token. Empty when raw does not parse.
func URLHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// RedriveWebhook re-drives the dead-lettered deliveries to one endpoint of
// workspace through dispatch.Admin.Redrive, as any dead letter: at most
// dispatch.MaxAdminBatch of them, the newest first, found among the
// newest webhookRead deliveries not done (run it again for the rest). It
// returns the ids asked for (for the audit line) and how many moved;
// CodeNotFound when there is none.
func (c *Console) RedriveWebhook(ctx context.Context, workspace, endpoint uuid.UUID) ([]uuid.UUID, int, error) {
	ids, err := ports.Query(ctx, c.uow, workspace, func(ctx context.Context, tx ports.Tx) ([]uuid.UUID, error) {
		return deadDeliveries(ctx, tx, model.WebhookDestination(endpoint))
	})
	if err != nil {
		return nil, 0, err
	}
	if len(ids) == 0 {
		return nil, 0, domain.Errorf(domain.CodeNotFound, "no dead-lettered delivery to this endpoint")
	}
	n, err := c.admin.Redrive(ctx, workspace, ids)
	return ids, n, err
}

// deadDeliveries pages through the deliveries to destination that are not
// done, newest first, for the ids of the dead-lettered ones.
func deadDeliveries(ctx context.Context, tx ports.Tx, destination string) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	q := ports.ListQuery{Limit: dispatch.MaxAdminBatch}
	for read := 0; read < webhookRead && len(ids) < dispatch.MaxAdminBatch; {
		page, err := tx.Outbox().Undelivered(ctx, destination, q)
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			if e.Status == model.OutboxDeadLetter && len(ids) < dispatch.MaxAdminBatch {
				ids = append(ids, e.ID)
			}
		}
		if len(page) < q.Limit {
			break
		}
		read += len(page)
		q.StartingAfter = page[len(page)-1].ID
	}
	return ids, nil
}
