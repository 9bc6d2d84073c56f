package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/ports"
)

// WebhookEndpoint is an endpoint as every answer shows it: never with its
// signing secret. (No field is named after the secret: the payload guard
// refuses such names in a saved response.)
type WebhookEndpoint struct {
	ID                   uuid.UUID  `json:"id" format:"uuid"`
	URL                  string     `json:"url" doc:"Where deliveries are POSTed"`
	EventTypes           []string   `json:"event_types" enum:"operation.succeeded,operation.failed,operation.cancelled,dead_letter.created" doc:"The events delivered to the endpoint"`
	Enabled              bool       `json:"enabled" doc:"false: nothing is delivered to the endpoint for now"`
	SigningKeyVersion    int        `json:"signing_key_version" doc:"Grows by one at each rotation of the signing secret"`
	PreviousKeyExpiresAt *time.Time `json:"previous_key_expires_at,omitempty" doc:"Until then deliveries are also signed with the secret the last rotation replaced"`
	CreatedAt            time.Time  `json:"created_at"`
	UpdatedAt            time.Time  `json:"updated_at"`
}

// WebhookEndpointCreated is an endpoint with its signing secret, the
// answer of a create or a rotation: the one place the secret is shown.
type WebhookEndpointCreated struct {
	WebhookEndpoint
	Secret string `json:"secret,omitempty" shown:"once" doc:"The signing secret (whsec_ and base64), for a Standard Webhooks library to verify deliveries with. Shown in this answer only: a replay of the request (same Idempotency-Key) answers without it, and it cannot be read again; rotate to get a new one." example:"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"`
}

type CreateWebhookEndpointRequest struct {
	URL        string   `json:"url" maxLength:"2048" doc:"An absolute http or https URL of a public host" example:"https://example.com/hooks/once"`
	EventTypes []string `json:"event_types" minItems:"1" enum:"operation.succeeded,operation.failed,operation.cancelled,dead_letter.created" doc:"The events to deliver"`
	Enabled    *bool    `json:"enabled,omitempty" doc:"Default true"`
}

type CreateWebhookEndpointInput struct {
	IdempotencyKeyHeader
	RawBody []byte
	Body    CreateWebhookEndpointRequest
}

type UpdateWebhookEndpointRequest struct {
	URL        *string  `json:"url,omitempty" maxLength:"2048" doc:"An absolute http or https URL of a public host"`
	EventTypes []string `json:"event_types,omitempty" minItems:"1" enum:"operation.succeeded,operation.failed,operation.cancelled,dead_letter.created" doc:"The events to deliver, replacing the list"`
	Enabled    *bool    `json:"enabled,omitempty" doc:"false stops deliveries to the endpoint until it is enabled again"`
}

type UpdateWebhookEndpointInput struct {
	ID   uuid.UUID `path:"id" format:"uuid"`
	Body UpdateWebhookEndpointRequest
}

type RotateWebhookSecretInput struct {
	IdempotencyKeyHeader
	ID uuid.UUID `path:"id" format:"uuid"`
}

type ListWebhookEndpointsInput struct {
	ListParams
}

// WebhookDelivery is a delivery to an endpoint that is not done.
type WebhookDelivery struct {
	ID            uuid.UUID  `json:"id" format:"uuid" doc:"The delivery's id, sent as webhook-id on every attempt"`
	EventType     string     `json:"event_type" enum:"operation.succeeded,operation.failed,operation.cancelled,dead_letter.created"`
	State         string     `json:"state" enum:"waiting,sending,dead_letter" doc:"waiting: for its next attempt; sending: handed to a worker; dead_letter: given up on, re-drive it with the dead letters"`
	Attempts      int        `json:"attempts" doc:"Attempts that failed by the receiver's answer (its refusals); its outages and throttling spend none"`
	LastError     string     `json:"last_error,omitempty" doc:"The last failure, sanitized: the receiver's status, or why it could not be reached"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty" doc:"When a waiting delivery is tried again"`
	CreatedAt     time.Time  `json:"created_at"`
}

type ListWebhookDeliveriesInput struct {
	ID uuid.UUID `path:"id" format:"uuid"`
	ListParams
}

// deliveryStates name an outbox status for a receiver's admin.
var deliveryStates = map[model.OutboxStatus]string{
	model.OutboxPending: "waiting", model.OutboxDispatching: "sending", model.OutboxDeadLetter: "dead_letter",
}

func toWebhookDelivery(e model.OutboxEvent) WebhookDelivery {
	var payload model.WebhookDelivery
	_ = json.Unmarshal(e.Payload, &payload) // written by us; a field left empty says it was not
	out := WebhookDelivery{
		ID: e.ID, EventType: payload.Event.Type, State: deliveryStates[e.Status], Attempts: e.JobAttempts,
		LastError: e.LastError, CreatedAt: e.CreatedAt,
	}
	if e.Status == model.OutboxPending {
		at := e.NextAttemptAt
		out.NextAttemptAt = &at
	}
	return out
}

func toWebhookEndpoint(e model.WebhookEndpoint) WebhookEndpoint {
	out := WebhookEndpoint{
		ID: e.ID, URL: e.URL, EventTypes: e.EventTypes, Enabled: e.Enabled, SigningKeyVersion: e.SecretVersion,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
	if out.EventTypes == nil {
		out.EventTypes = []string{}
	}
	if e.SealedPreviousSecret != nil {
		at := e.PreviousSecretExpiresAt
		out.PreviousKeyExpiresAt = &at
	}
	return out
}

func toWebhookEndpointCreated(w webhooks.WithSecret) WebhookEndpointCreated {
	return WebhookEndpointCreated{WebhookEndpoint: toWebhookEndpoint(w.Endpoint), Secret: w.Secret}
}

func webhookEndpointLocation(id uuid.UUID) string { return "/v1/webhook-endpoints/" + id.String() }

func (h *handlers) registerWebhookEndpoints(api huma.API) {
	const adminsOnly = " Workspace admins only."
	registerIdempotent(api, needs(model.ScopeWebhooksWrite, created(huma.Operation{
		OperationID: "createWebhookEndpoint", Method: http.MethodPost, Path: "/v1/webhook-endpoints",
		Summary: "Create a webhook endpoint",
		Description: "The URL must be an http or https URL of a public host (no loopback, private or metadata address, unless the operator allows the host); it is resolved now and again at each delivery. " +
			"The answer holds the signing secret, shown only there. A URL another endpoint of the workspace has is refused (409 WEBHOOK_ENDPOINT_EXISTS), as is an endpoint past the workspace's cap (409 LIMIT_REACHED)." + adminsOnly,
		Tags: []string{"webhooks"}, Security: bearer, Errors: []int{400, 401, 403, 409, 413, 422, 500, 503},
	})), h.deps.MaxBodyBytes, h.createWebhookEndpoint)
	h.registerWebhookEndpointList(api)
	registerRead(api, model.ScopeWebhooksRead, "getWebhookEndpoint", "/v1/webhook-endpoints/{id}", "Read a webhook endpoint", "webhooks",
		h.deps.Webhooks.Get, toWebhookEndpoint)
	huma.Register(api, needs(model.ScopeWebhooksWrite, huma.Operation{
		OperationID: "updateWebhookEndpoint", Method: http.MethodPatch, Path: "/v1/webhook-endpoints/{id}",
		MaxBodyBytes: h.deps.MaxBodyBytes,
		Summary:      "Update a webhook endpoint",
		Description:  "Changes the fields sent: the URL (checked as on create; one another endpoint has is 409 WEBHOOK_ENDPOINT_EXISTS), the event types, enabled. Safe to repeat." + adminsOnly,
		Tags:         []string{"webhooks"}, Security: bearer, Errors: []int{400, 401, 403, 404, 409, 413, 422, 500, 503},
	}), h.updateWebhookEndpoint)
	huma.Register(api, needs(model.ScopeWebhooksWrite, huma.Operation{
		OperationID: "deleteWebhookEndpoint", Method: http.MethodDelete, Path: "/v1/webhook-endpoints/{id}",
		DefaultStatus: http.StatusNoContent,
		Summary:       "Delete a webhook endpoint",
		Description:   "Nothing more is delivered to it. An endpoint already deleted gets 404." + adminsOnly,
		Tags:          []string{"webhooks"}, Security: bearer, Errors: []int{401, 403, 404, 422, 500, 503},
	}), h.deleteWebhookEndpoint)
	huma.Register(api, needs(model.ScopeWebhooksRead, get("listWebhookDeliveries", "/v1/webhook-endpoints/{id}/deliveries", "webhooks",
		"List an endpoint's deliveries that are not done",
		"The deliveries waiting for their next attempt (with the last error and when it comes) and those given up on (re-drive them at /v1/outbox/dead-letters). Delivered ones are not listed. Newest first; pass the id of the last item as starting_after for the next page while has_more is true."+adminsOnly,
		401, 403, 404, 422, 500, 503)), h.listWebhookDeliveries)
	registerIdempotent(api, needs(model.ScopeWebhooksWrite, huma.Operation{
		OperationID: "rotateWebhookEndpointSecret", Method: http.MethodPost, Path: "/v1/webhook-endpoints/{id}/rotate-secret",
		Summary: "Rotate a webhook endpoint's signing secret",
		Description: "Answers the new secret, shown only there. For 24 hours deliveries are signed with both the new and the replaced secret " +
			"(two signatures in webhook-signature), so a receiver can switch without refusing one; a secret replaced before that is dropped at once. " +
			"To stop the replaced secret before its 24 hours (it may have leaked), revoke it: DELETE /v1/webhook-endpoints/{id}/previous-secret." + adminsOnly,
		Tags: []string{"webhooks"}, Security: bearer, Errors: []int{400, 401, 403, 404, 409, 422, 500, 503},
	}), h.deps.MaxBodyBytes, h.rotateWebhookEndpointSecret)
	huma.Register(api, needs(model.ScopeWebhooksWrite, huma.Operation{
		OperationID: "revokeWebhookEndpointPreviousSecret", Method: http.MethodDelete, Path: "/v1/webhook-endpoints/{id}/previous-secret",
		Summary: "Revoke a webhook endpoint's replaced secret now",
		Description: "Stops, at once, the secret the last rotation replaced: from now on deliveries are signed with the current secret only " +
			"(one signature in webhook-signature), instead of both until previous_key_expires_at. " +
			"Answers the endpoint, without previous_key_expires_at. Safe to repeat: an endpoint with no replaced secret is answered as it is." + adminsOnly,
		Tags: []string{"webhooks"}, Security: bearer, Errors: []int{401, 403, 404, 422, 500, 503},
	}), h.revokeWebhookEndpointPreviousSecret)
}

func (h *handlers) registerWebhookEndpointList(api huma.API) {
	huma.Register(api, needs(model.ScopeWebhooksRead, get("listWebhookEndpoints", "/v1/webhook-endpoints", "webhooks", "List webhook endpoints",
		"Newest first; pass the id of the last item as starting_after for the next page while has_more is true. Workspace admins only.",
		401, 403, 422, 500, 503)), func(ctx context.Context, in *ListWebhookEndpointsInput) (*ListOutput[WebhookEndpoint], error) {
		p, err := principalFrom(ctx)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		page, err := h.deps.Webhooks.List(ctx, p, ports.ListQuery{Limit: in.Limit, StartingAfter: in.StartingAfter})
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		return listOutput(page, toWebhookEndpoint), nil
	})
}

func (h *handlers) createWebhookEndpoint(ctx context.Context, in *CreateWebhookEndpointInput) (*IdempotentOutput[WebhookEndpointCreated], error) {
	enabled := in.Body.Enabled == nil || *in.Body.Enabled
	// Resolving the host waits on DNS: once admitted, before the
	// transaction.
	checkURL := func(ctx context.Context, p model.Principal) error {
		return h.deps.Webhooks.CheckURL(ctx, p, in.Body.URL)
	}
	return runIdempotentChecked(ctx, h.deps.Idempotency, in.RawBody, checkURL,
		func(ctx context.Context, tx ports.Tx, p model.Principal) (int, string, WebhookEndpointCreated, error) {
			created, err := h.deps.Webhooks.Create(ctx, tx, p, webhooks.CreateCommand{URL: in.Body.URL, EventTypes: in.Body.EventTypes, Enabled: enabled})
			if err != nil {
				return 0, "", WebhookEndpointCreated{}, err
			}
			return http.StatusCreated, webhookEndpointLocation(created.Endpoint.ID), toWebhookEndpointCreated(created), nil
		})
}

func (h *handlers) rotateWebhookEndpointSecret(ctx context.Context, in *RotateWebhookSecretInput) (*IdempotentOutput[WebhookEndpointCreated], error) {
	return runIdempotent(ctx, h.deps.Idempotency, nil,
		func(ctx context.Context, tx ports.Tx, p model.Principal) (int, string, WebhookEndpointCreated, error) {
			rotated, err := h.deps.Webhooks.RotateSecret(ctx, tx, p, in.ID)
			if err != nil {
				return 0, "", WebhookEndpointCreated{}, err
			}
			return http.StatusOK, "", toWebhookEndpointCreated(rotated), nil
		})
}

func (h *handlers) revokeWebhookEndpointPreviousSecret(ctx context.Context, in *IDInput) (*ReadOutput[WebhookEndpoint], error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	e, err := h.deps.Webhooks.RevokePreviousSecret(ctx, p, in.ID)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &ReadOutput[WebhookEndpoint]{Body: toWebhookEndpoint(e)}, nil
}

func (h *handlers) updateWebhookEndpoint(ctx context.Context, in *UpdateWebhookEndpointInput) (*ReadOutput[WebhookEndpoint], error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	patch := webhooks.Patch{URL: in.Body.URL, Enabled: in.Body.Enabled}
	if in.Body.EventTypes != nil {
		patch.EventTypes = &in.Body.EventTypes
	}
	if patch.URL != nil {
		if err := h.deps.Webhooks.CheckURL(ctx, p, *patch.URL); err != nil {
			return nil, toProblem(ctx, err)
		}
	}
	e, err := h.deps.Webhooks.Update(ctx, p, in.ID, patch)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &ReadOutput[WebhookEndpoint]{Body: toWebhookEndpoint(e)}, nil
}

func (h *handlers) deleteWebhookEndpoint(ctx context.Context, in *IDInput) (*NoContent, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	if err := h.deps.Webhooks.Delete(ctx, p, in.ID); err != nil {
		return nil, toProblem(ctx, err)
	}
	return &NoContent{}, nil
}

func (h *handlers) listWebhookDeliveries(ctx context.Context, in *ListWebhookDeliveriesInput) (*ListOutput[WebhookDelivery], error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	page, err := h.deps.Webhooks.Undelivered(ctx, p, in.ID, ports.ListQuery{Limit: in.Limit, StartingAfter: in.StartingAfter})
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return listOutput(page, toWebhookDelivery), nil
}
