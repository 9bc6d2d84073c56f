package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/apikeys"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// APIKey is a key as every answer shows it: never its secret, of which
// the prefix (the part before the random one) is all that is kept in
// clear.
type APIKey struct {
	ID         uuid.UUID  `json:"id" format:"uuid"`
	Prefix     string     `json:"prefix" doc:"The start of the key (once_sk_ and its lookup id), to tell keys apart; the rest is never shown again" example:"once_sk_4k9z0q2m7x1c"`
	Name       string     `json:"name" doc:"What the key is for"`
	Scopes     []string   `json:"scopes" enum:"stores:read,stores:write,syncs:read,syncs:write,media:read,media:write,products:read,products:write,ai:read,ai:write,operations:read,operations:write,webhooks:read,webhooks:write,members:read,members:write,keys:read,keys:write,outbox:read,outbox:write" doc:"What the key may do (docs/api.md#scopes)"`
	CreatedAt  time.Time  `json:"created_at"`
	CreatedBy  uuid.UUID  `json:"created_by" format:"uuid" doc:"The admin who made the key; the key acts as this user"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty" doc:"When the key last authenticated a request, to a minute; absent: never"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty" doc:"When the key was revoked; a revoked key is refused"`
}

// APIKeyCreated is a key with its secret, the answer of a create: the one
// place the secret is shown.
type APIKeyCreated struct {
	APIKey
	Secret string `json:"secret,omitempty" shown:"once" doc:"The key, to send as Authorization: Bearer <secret>. Shown in this answer only: a replay of the request (same Idempotency-Key) answers without it, and it cannot be read again; create another key if it is lost." example:"once_sk_4k9z0q2m7x1c_Jx3t8yV0bQ2nR5wK7pL1sD9fG4hA6cE8uZ0iM3oN5qT"`
}

type CreateAPIKeyRequest struct {
	Name   string   `json:"name" minLength:"1" maxLength:"100" doc:"What the key is for" example:"ERP sync"`
	Scopes []string `json:"scopes" minItems:"1" enum:"stores:read,stores:write,syncs:read,syncs:write,media:read,media:write,products:read,products:write,ai:read,ai:write,operations:read,operations:write,webhooks:read,webhooks:write,members:read,members:write,keys:read,keys:write,outbox:read,outbox:write" doc:"What the key may do: scopes you hold yourself" example:"[\"media:read\",\"products:write\"]"`
}

type CreateAPIKeyInput struct {
	IdempotencyKeyHeader
	RawBody []byte
	Body    CreateAPIKeyRequest
}

type ListAPIKeysInput struct {
	ListParams
}

func toAPIKey(k model.APIKey) APIKey {
	out := APIKey{
		ID: k.ID, Prefix: apikeys.DisplayPrefix(k), Name: k.Name, Scopes: make([]string, 0, len(k.Scopes)),
		CreatedAt: k.CreatedAt, CreatedBy: k.CreatedBy,
	}
	for _, s := range k.Scopes {
		out.Scopes = append(out.Scopes, string(s))
	}
	if !k.LastUsedAt.IsZero() {
		at := k.LastUsedAt
		out.LastUsedAt = &at
	}
	if !k.RevokedAt.IsZero() {
		at := k.RevokedAt
		out.RevokedAt = &at
	}
	return out
}

func apiKeyLocation(id uuid.UUID) string { return "/v1/api-keys/" + id.String() }

func (h *handlers) registerAPIKeys(api huma.API) {
	const adminsOnly = " Workspace admins only."
	registerIdempotent(api, needs(model.ScopeKeysWrite, created(huma.Operation{
		OperationID: "createAPIKey", Method: http.MethodPost, Path: "/v1/api-keys",
		Summary: "Create an API key",
		Description: "A key for a machine client, with the scopes it may use (at most yours). " +
			"The answer holds the secret, shown only there; send it as Authorization: Bearer <secret>." + adminsOnly,
		Tags: []string{"api-keys"}, Security: bearer, Errors: []int{400, 401, 403, 409, 413, 422, 500, 503},
	})), h.deps.MaxBodyBytes, h.createAPIKey)
	huma.Register(api, needs(model.ScopeKeysRead, get("listAPIKeys", "/v1/api-keys", "api-keys", "List API keys",
		"Revoked keys included. Newest first; pass the id of the last item as starting_after for the next page while has_more is true."+adminsOnly,
		401, 403, 422, 500, 503)), func(ctx context.Context, in *ListAPIKeysInput) (*ListOutput[APIKey], error) {
		p, err := principalFrom(ctx)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		page, err := h.deps.APIKeys.List(ctx, p, ports.ListQuery{Limit: in.Limit, StartingAfter: in.StartingAfter})
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		return listOutput(page, toAPIKey), nil
	})
	registerRead(api, model.ScopeKeysRead, "getAPIKey", "/v1/api-keys/{id}", "Read an API key", "api-keys", h.deps.APIKeys.Get, toAPIKey)
	huma.Register(api, needs(model.ScopeKeysWrite, huma.Operation{
		OperationID: "revokeAPIKey", Method: http.MethodDelete, Path: "/v1/api-keys/{id}",
		DefaultStatus: http.StatusNoContent,
		Summary:       "Revoke an API key",
		Description: "The key is refused from now on by this server, and by every other within ONCE_AUTH_CACHE_TTL (5 seconds by default). " +
			"It stays listed, with revoked_at. Revoking a revoked key changes nothing." + adminsOnly,
		Tags: []string{"api-keys"}, Security: bearer, Errors: []int{401, 403, 404, 422, 500, 503},
	}), h.revokeAPIKey)
}

func (h *handlers) createAPIKey(ctx context.Context, in *CreateAPIKeyInput) (*IdempotentOutput[APIKeyCreated], error) {
	return runIdempotent(ctx, h.deps.Idempotency, in.RawBody,
		func(ctx context.Context, tx ports.Tx, p model.Principal) (int, string, APIKeyCreated, error) {
			created, err := h.deps.APIKeys.Create(ctx, tx, p, apikeys.CreateCommand{Name: in.Body.Name, Scopes: in.Body.Scopes})
			if err != nil {
				return 0, "", APIKeyCreated{}, err
			}
			return http.StatusCreated, apiKeyLocation(created.Key.ID), APIKeyCreated{APIKey: toAPIKey(created.Key), Secret: created.Secret}, nil
		})
}

func (h *handlers) revokeAPIKey(ctx context.Context, in *IDInput) (*NoContent, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	if _, err := h.deps.APIKeys.Revoke(ctx, p, in.ID); err != nil {
		return nil, toProblem(ctx, err)
	}
	return &NoContent{}, nil
}
