package model

import (
	"time"

	"github.com/google/uuid"
)

// The events a webhook endpoint may subscribe to: an operation's end, and
// a job the dispatcher gave up on (a dead letter), which operators watch.
const (
	WebhookOperationSucceeded = "operation.succeeded"
	WebhookOperationFailed    = "operation.failed"
	WebhookOperationCancelled = "operation.cancelled"
	WebhookDeadLetterCreated  = "dead_letter.created"
)

// WebhookEventTypes are the event types an endpoint may subscribe to, in
// the order the API documents them.
var WebhookEventTypes = []string{
	WebhookOperationSucceeded, WebhookOperationFailed, WebhookOperationCancelled, WebhookDeadLetterCreated,
}

// WebhookEndpoint is a URL of a workspace that receives its events,
// signed per the Standard Webhooks specification. Its signing secrets are
// only ever held sealed (AES-GCM); the plaintext is shown once, in the
// answer that creates or rotates it, and exists otherwise only while a
// delivery is being signed.
type WebhookEndpoint struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	URL         string
	// EventTypes are the events delivered to the endpoint, each one of
	// WebhookEventTypes, without repeats.
	EventTypes []string
	// Enabled is false for an endpoint that receives nothing for now.
	Enabled bool
	// SecretVersion grows by one at each rotation; it binds the sealed
	// secret to its version, so a ciphertext of an older one does not open
	// as the current.
	SecretVersion int
	// SealedSecret is the ciphertext of the current secret.
	SealedSecret []byte
	// SealedPreviousSecret is the secret before the last rotation
	// (version SecretVersion-1), which deliveries are still signed with
	// until PreviousSecretExpiresAt, so receivers can move to the new one
	// without dropping a delivery. Nil when there is none.
	SealedPreviousSecret    []byte
	PreviousSecretExpiresAt time.Time
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

// EventWebhookDeliver asks a worker to deliver one event to one endpoint.
// The outbox event's id is the delivery's webhook-id: the same on every
// retry, so receivers dedupe on it.
const EventWebhookDeliver = "webhook.deliver"

// WebhookDelivery is the payload of EventWebhookDeliver: the endpoint, and
// the event as its receiver gets it. Ids and states only: what a receiver
// needs more it reads from the API.
type WebhookDelivery struct {
	EndpointID uuid.UUID        `json:"endpoint_id"`
	Event      WebhookEventBody `json:"event"`
}

// WebhookEventBody is the JSON body POSTed to a receiver.
type WebhookEventBody struct {
	// Type is one of WebhookEventTypes.
	Type      string           `json:"type"`
	Timestamp time.Time        `json:"timestamp"`
	Data      WebhookEventData `json:"data"`
}

// WebhookEventData says what the event is about: an operation (its kind,
// status and resource) or a dead-lettered event.
type WebhookEventData struct {
	OperationID  uuid.UUID       `json:"operation_id,omitzero"`
	Kind         string          `json:"kind,omitempty"`
	Status       OperationStatus `json:"status,omitempty"`
	ResourceType string          `json:"resource_type,omitempty"`
	ResourceID   uuid.UUID       `json:"resource_id,omitzero"`
	EventID      uuid.UUID       `json:"event_id,omitzero"`
	EventType    string          `json:"event_type,omitempty"`
}

// WebhookDestination is where a delivery to endpoint goes, for the
// worker's pace and breaker: each endpoint its own, so a receiver that is
// slow or down holds up no other.
func WebhookDestination(endpoint uuid.UUID) string { return "webhook/" + endpoint.String() }
