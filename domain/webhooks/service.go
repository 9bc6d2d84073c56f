// Package webhooks holds the use cases of a workspace's webhook
// endpoints: the URLs its events are pushed to, each with the event types
// it receives and a signing secret (Standard Webhooks), managed by the
// workspace's admins.
package webhooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/ports"
)

// SecretOverlap is how long the secret replaced by a rotation still signs
// deliveries beside the new one, so a receiver can move to the new secret
// without refusing a delivery meanwhile (docs/api.md).
const SecretOverlap = 24 * time.Hour

// MaxURLLength bounds an endpoint's URL.
const MaxURLLength = 2048

// resolveBudget bounds the DNS lookup of an endpoint's host: a slow name
// gets 503 rather than holding the request.
const resolveBudget = 3 * time.Second

// Limits bound what one workspace may hold.
type Limits struct {
	// MaxEndpoints is how many endpoints one workspace may have: every
	// operation's end writes one delivery per subscribed endpoint, in its
	// own transaction, so endpoints without bound would make any end a
	// fan-out of as many jobs (docs/configuration.md).
	MaxEndpoints int
}

// Service manages webhook endpoints. Every use case needs webhooks:read or
// webhooks:write, which only the workspace's admins have (CodeForbidden
// otherwise; CodeInsufficientScope for an API key without it).
type Service struct {
	uow      ports.UnitOfWork
	sealer   ports.CredentialSealer
	clock    ports.Clock
	ids      ports.IDGenerator
	policy   fetchpolicy.Policy
	resolver ports.HostResolver
	lists    *pagination.Service
	limits   Limits
}

// NewService builds the service. policy and resolver check an endpoint's
// URL as a material transfer's source URLs are checked: the deliveries
// are requests the service makes on the workspace's behalf.
func NewService(uow ports.UnitOfWork, sealer ports.CredentialSealer, clock ports.Clock, ids ports.IDGenerator,
	policy fetchpolicy.Policy, resolver ports.HostResolver, limits Limits,
) *Service {
	return &Service{uow: uow, sealer: sealer, clock: clock, ids: ids, policy: policy, resolver: resolver,
		lists: pagination.NewService(uow), limits: limits}
}

// WithSecret is an endpoint and its signing secret in plaintext, which
// only the answers of Create and RotateSecret carry.
type WithSecret struct {
	Endpoint model.WebhookEndpoint
	Secret   string
}

// CreateCommand asks for a new endpoint.
type CreateCommand struct {
	URL        string
	EventTypes []string
	Enabled    bool
}

// Patch changes the fields it sets of an endpoint.
type Patch struct {
	URL        *string
	EventTypes *[]string
	Enabled    *bool
}

// CheckURL says whether raw may be an endpoint's URL: an absolute http
// or https URL of at most MaxURLLength bytes whose host the fetch policy
// lets the service reach, a public address or a name resolving to public
// addresses only (the operator's allow-lists open more). It resolves the
// host, so callers run it before their transaction, which must not wait
// on DNS; Create and Update check the form again.
//
// Errors: CodeForbidden for a caller who is not an admin; CodeValidation
// (field "url"), never repeating the URL, which may carry a token;
// CodeUnavailable when the host cannot be resolved now.
func (s *Service) CheckURL(ctx context.Context, p model.Principal, raw string) error {
	if err := p.Require(model.ScopeWebhooksWrite); err != nil {
		return err
	}
	t, err := s.checkForm(raw)
	if err != nil || !t.NeedsLookup() {
		return err
	}
	// A name that does not resolve passes, as a material's source does:
	// the delivery's dialer checks the address it connects to anyway,
	// which is what stops a name that changes its answer.
	ctx, cancel := context.WithTimeout(ctx, resolveBudget)
	defer cancel()
	addrs, err := s.resolver.LookupHost(ctx, t.Host)
	if err != nil {
		return &domain.Error{Code: domain.CodeUnavailable, Err: err, Message: "the host of url cannot be resolved now; retry later"}
	}
	for _, addr := range addrs {
		var refusal *fetchpolicy.AddrRefusal
		if errors.As(s.policy.CheckAddr(addr), &refusal) {
			return invalidURL("has a host that resolves to " + refusal.Range + ", which may not be called; only public addresses may")
		}
	}
	return nil
}

// Create writes, in tx, an endpoint with a new signing secret and returns
// the secret, which is never shown again. Callers run CheckURL first.
//
// Errors: CodeForbidden, CodeValidation for a URL of a refused form or
// unknown or no event types, CodeWebhookEndpointExists for a URL another
// endpoint of the workspace has, CodeLimitReached when the workspace has
// Limits.MaxEndpoints.
func (s *Service) Create(ctx context.Context, tx ports.Tx, p model.Principal, cmd CreateCommand) (WithSecret, error) {
	if err := p.Require(model.ScopeWebhooksWrite); err != nil {
		return WithSecret{}, err
	}
	events, err := checkEventTypes(cmd.EventTypes)
	if err != nil {
		return WithSecret{}, err
	}
	if _, err := s.checkForm(cmd.URL); err != nil {
		return WithSecret{}, err
	}
	if err := s.admit(ctx, tx, cmd.URL, uuid.Nil); err != nil {
		return WithSecret{}, err
	}
	now := s.clock.Now()
	e := model.WebhookEndpoint{
		ID: s.ids.NewID(), WorkspaceID: p.WorkspaceID, URL: cmd.URL, EventTypes: events, Enabled: cmd.Enabled,
		CreatedAt: now, UpdatedAt: now,
	}
	secret, err := s.newSecret(&e)
	if err != nil {
		return WithSecret{}, err
	}
	if err := repo(tx).Create(ctx, e); err != nil {
		return WithSecret{}, err
	}
	return WithSecret{Endpoint: e, Secret: secret}, nil
}

// Get reads one endpoint. Errors: CodeNotFound.
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.WebhookEndpoint, error) {
	if err := p.Require(model.ScopeWebhooksRead); err != nil {
		return model.WebhookEndpoint{}, err
	}
	return ports.Query(ctx, s.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (model.WebhookEndpoint, error) {
		return repo(tx).Get(ctx, id)
	})
}

// List returns a page of the workspace's endpoints, newest first.
func (s *Service) List(ctx context.Context, p model.Principal, q ports.ListQuery) (pagination.Page[model.WebhookEndpoint], error) {
	if err := p.Require(model.ScopeWebhooksRead); err != nil {
		return pagination.Page[model.WebhookEndpoint]{}, err
	}
	return pagination.List(ctx, s.lists, p, q, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.WebhookEndpoint, error) {
		return repo(tx).List
	})
}

// Update changes what patch sets: the URL, the event types, whether the
// endpoint is enabled. Callers run CheckURL on a new URL first.
//
// Errors: Create's (but CodeLimitReached), and CodeNotFound.
func (s *Service) Update(ctx context.Context, p model.Principal, id uuid.UUID, patch Patch) (model.WebhookEndpoint, error) {
	if err := p.Require(model.ScopeWebhooksWrite); err != nil {
		return model.WebhookEndpoint{}, err
	}
	var events []string
	if patch.EventTypes != nil {
		var err error
		if events, err = checkEventTypes(*patch.EventTypes); err != nil {
			return model.WebhookEndpoint{}, err
		}
	}
	if patch.URL != nil {
		if _, err := s.checkForm(*patch.URL); err != nil {
			return model.WebhookEndpoint{}, err
		}
	}
	return ports.Query(ctx, s.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (model.WebhookEndpoint, error) {
		if patch.URL != nil {
			if err := s.admit(ctx, tx, *patch.URL, id); err != nil {
				return model.WebhookEndpoint{}, err
			}
		}
		return s.changeIn(ctx, tx, id, func(e *model.WebhookEndpoint) error {
			if patch.URL != nil {
				e.URL = *patch.URL
			}
			if patch.EventTypes != nil {
				e.EventTypes = events
			}
			if patch.Enabled != nil {
				e.Enabled = *patch.Enabled
			}
			return nil
		})
	})
}

// Delete removes an endpoint. Errors: CodeNotFound.
func (s *Service) Delete(ctx context.Context, p model.Principal, id uuid.UUID) error {
	if err := p.Require(model.ScopeWebhooksWrite); err != nil {
		return err
	}
	return s.uow.Transact(ctx, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return repo(tx).Delete(ctx, id)
	})
}

// RotateSecret gives the endpoint, in tx, a new signing secret and
// returns it, never to be shown again. The secret it replaces keeps
// signing beside the new one for SecretOverlap; one replaced earlier
// stops at once.
//
// Errors: CodeForbidden, CodeNotFound.
func (s *Service) RotateSecret(ctx context.Context, tx ports.Tx, p model.Principal, id uuid.UUID) (WithSecret, error) {
	if err := p.Require(model.ScopeWebhooksWrite); err != nil {
		return WithSecret{}, err
	}
	var secret string
	e, err := s.changeIn(ctx, tx, id, func(e *model.WebhookEndpoint) error {
		e.SealedPreviousSecret, e.PreviousSecretExpiresAt = e.SealedSecret, e.UpdatedAt.Add(SecretOverlap)
		var err error
		secret, err = s.newSecret(e)
		return err
	})
	if err != nil {
		return WithSecret{}, err
	}
	return WithSecret{Endpoint: e, Secret: secret}, nil
}

// RevokePreviousSecret stops, at once, the secret the last rotation
// replaced: deliveries are signed with the current secret only from now
// on, as if the overlap had ended (for a replaced secret that may have
// leaked). An endpoint without one is left as it is, so a repeat changes
// nothing.
//
// Errors: CodeForbidden, CodeNotFound.
func (s *Service) RevokePreviousSecret(ctx context.Context, p model.Principal, id uuid.UUID) (model.WebhookEndpoint, error) {
	if err := p.Require(model.ScopeWebhooksWrite); err != nil {
		return model.WebhookEndpoint{}, err
	}
	return ports.Query(ctx, s.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (model.WebhookEndpoint, error) {
		return repo(tx).Change(ctx, id, func(e *model.WebhookEndpoint) error {
			if e.SealedPreviousSecret == nil {
				return nil
			}
			e.SealedPreviousSecret, e.PreviousSecretExpiresAt, e.UpdatedAt = nil, time.Time{}, s.clock.Now()
			return nil
		})
	})
}

// SigningSecrets are the secrets a delivery to e is signed with at now:
// the current one, then the one it replaced while its overlap lasts.
func (s *Service) SigningSecrets(e model.WebhookEndpoint, now time.Time) ([]string, error) {
	current, err := openSecret(s.sealer, e, e.SealedSecret, e.SecretVersion)
	if err != nil {
		return nil, err
	}
	secrets := []string{current}
	if e.SealedPreviousSecret != nil && now.Before(e.PreviousSecretExpiresAt) {
		previous, err := openSecret(s.sealer, e, e.SealedPreviousSecret, e.SecretVersion-1)
		if err != nil {
			return nil, err
		}
		secrets = append(secrets, previous)
	}
	return secrets, nil
}

// changeIn applies fn to the endpoint id and saves it in tx, with
// updated_at moved to now before fn runs.
func (s *Service) changeIn(ctx context.Context, tx ports.Tx, id uuid.UUID, fn func(e *model.WebhookEndpoint) error) (model.WebhookEndpoint, error) {
	// One call from the read to the write: of two changes crossing (two
	// rotations, a rotation and a PATCH), the second works on what the
	// first saved, so no answered secret is lost.
	return repo(tx).Change(ctx, id, func(e *model.WebhookEndpoint) error {
		e.UpdatedAt = s.clock.Now()
		return fn(e)
	})
}

// admit takes the workspace's endpoint lock for tx (held to its end, so
// parallel creates are counted one after the other) and refuses url when
// an endpoint other than except has it, and a new endpoint (except
// uuid.Nil) when the workspace has Limits.MaxEndpoints already. One URL
// twice would be two deliveries of every event to one receiver. The
// messages never repeat the URL, which may carry a token.
func (s *Service) admit(ctx context.Context, tx ports.Tx, url string, except uuid.UUID) error {
	n, err := repo(tx).CountLocked(ctx, url, except)
	if err != nil {
		return err
	}
	if n.SameURL != uuid.Nil {
		return &domain.Error{Code: domain.CodeWebhookEndpointExists, Field: "url", ResourceID: n.SameURL.String(),
			Message: "an endpoint of the workspace already has this url"}
	}
	if except == uuid.Nil && n.All >= s.limits.MaxEndpoints {
		return domain.Errorf(domain.CodeLimitReached, "the workspace has %d webhook endpoints, as many as it may; delete one first", n.All)
	}
	return nil
}

// newSecret makes a new secret for e, seals it as e's next version and
// returns its plaintext.
func (s *Service) newSecret(e *model.WebhookEndpoint) (string, error) {
	secret, err := NewSecret()
	if err != nil {
		return "", err
	}
	e.SecretVersion++
	e.SealedSecret, err = sealSecret(s.sealer, *e, secret)
	return secret, err
}

func repo(tx ports.Tx) ports.WebhookEndpointRepository {
	return ports.Repository[ports.WebhookEndpointRepository](tx)
}

// checkEventTypes returns events without repeats, in the order given;
// CodeValidation if there is none or one is unknown.
func checkEventTypes(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, &domain.Error{Code: domain.CodeValidation, Field: "event_types",
			Message: "event_types must name at least one of " + strings.Join(model.WebhookEventTypes, ", ")}
	}
	var out []string
	for i, ev := range events {
		if !slices.Contains(model.WebhookEventTypes, ev) {
			field := fmt.Sprintf("event_types[%d]", i)
			return nil, &domain.Error{Code: domain.CodeValidation, Field: field,
				Message: field + " must be one of " + strings.Join(model.WebhookEventTypes, ", ")}
		}
		if !slices.Contains(out, ev) {
			out = append(out, ev)
		}
	}
	return out, nil
}

// checkForm checks what of a URL needs no network: its length, and its
// form against the fetch policy.
func (s *Service) checkForm(raw string) (fetchpolicy.Target, error) {
	if len(raw) > MaxURLLength {
		return fetchpolicy.Target{}, invalidURL(fmt.Sprintf("is longer than %d characters", MaxURLLength))
	}
	t, err := s.policy.CheckURL(raw)
	if err != nil {
		return t, invalidURL(err.Error())
	}
	return t, nil
}

func invalidURL(reason string) error {
	return &domain.Error{Code: domain.CodeValidation, Field: "url", Message: "url " + reason}
}

// Undelivered returns a page of the deliveries to the endpoint id that
// are not done, newest first, paged as every list: those waiting for
// their next attempt, with the last error, and those given up on (dead
// letters, which admins re-drive with the others).
//
// Errors: CodeForbidden, CodeNotFound for no such endpoint.
func (s *Service) Undelivered(ctx context.Context, p model.Principal, id uuid.UUID, q ports.ListQuery) (pagination.Page[model.OutboxEvent], error) {
	if err := p.Require(model.ScopeWebhooksRead); err != nil {
		return pagination.Page[model.OutboxEvent]{}, err
	}
	return pagination.List(ctx, s.lists, p, q, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.OutboxEvent, error) {
		return func(ctx context.Context, q ports.ListQuery) ([]model.OutboxEvent, error) {
			if _, err := repo(tx).Get(ctx, id); err != nil {
				return nil, err
			}
			return tx.Outbox().Undelivered(ctx, model.WebhookDestination(id), q)
		}
	})
}
