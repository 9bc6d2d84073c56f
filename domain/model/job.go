package model

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
)

// IDSource makes new ids. It is ports.IDGenerator seen from domain, which
// imports nothing of ours.
type IDSource interface {
	NewID() uuid.UUID
}

// JobSpec says what background work a use case starts: the kind of the
// operation that tracks it, the resource it works on (which is also the
// event's aggregate) and the event that asks a worker for it.
type JobSpec struct {
	OperationKind string
	ResourceType  string
	ResourceID    uuid.UUID
	EventType     string
	// Payload builds the event's payload around the new operation, which
	// every payload names (it embeds JobOperation) so the worker can move
	// it forward. It must pass CheckPayloadSafe: ids, versions and
	// snapshots, never secrets.
	Payload func(JobOperation) any
	// Destination is where the job's external call goes (zero: nowhere
	// outside); OrderingKey orders the job after every earlier job of the
	// same key (empty: none). Both travel with the event to the worker.
	Destination Destination
	OrderingKey string
}

// JobOperation is the part every job payload has alike: the operation the
// worker moves forward. Payloads embed it, so the one field name
// JobOperationID reads is written in one place. Each payload names the row
// its job works on with a Task method beside it (domain/jobs): the task
// row, or the store or media whose longer-lived row the job moves forward.
type JobOperation struct {
	OperationID uuid.UUID `json:"operation_id"`
	// RequestToken is what the job's calls to external systems carry
	// (request_token.go): derived from the idempotency scope of the request
	// that started the job; empty for a job started outside one, and in
	// payloads written before tokens were.
	RequestToken string `json:"request_token,omitempty"`
}

// Operation is the operation the job moves forward (domain/jobs).
func (j JobOperation) Operation() uuid.UUID { return j.OperationID }

// TokenOr is the job's request token, or, for a job that has none, the text
// of fallback: the row id its handler used as the token before.
func (j JobOperation) TokenOr(fallback uuid.UUID) string {
	if j.RequestToken != "" {
		return j.RequestToken
	}
	return fallback.String()
}

// NewJob builds the pending operation that tracks spec's work and the
// outbox event that starts it, carrying the traceparent of ctx to the
// worker, and the request token of the idempotent request running in ctx
// (request_token.go). It takes two ids from ids: the operation's, then the
// event's. Writing them is the caller's, in its own order and transaction
// (some use cases write their task row first so a duplicate fails before
// anything else is written).
//
// Errors: what NewOutboxEvent returns for the payload.
func NewJob(ctx context.Context, ids IDSource, p Principal, now time.Time, spec JobSpec) (Operation, OutboxEvent, error) {
	op := Operation{
		ID:           ids.NewID(),
		WorkspaceID:  p.WorkspaceID,
		Kind:         spec.OperationKind,
		Status:       OperationPending,
		ResourceType: spec.ResourceType,
		ResourceID:   spec.ResourceID,
		CreatedBy:    p.UserID,
		CreatedAt:    now,
		UpdatedAt:    now,
	}
	event, err := NewOutboxEvent(ids.NewID(), p.WorkspaceID, spec.EventType, spec.ResourceType, spec.ResourceID,
		spec.Payload(JobOperation{OperationID: op.ID, RequestToken: jobToken(ctx, spec.EventType)}), now)
	if err != nil {
		return Operation{}, OutboxEvent{}, err
	}
	event.Traceparent = domain.TraceparentFrom(ctx)
	event.Destination = spec.Destination.String()
	event.OrderingKey = spec.OrderingKey
	return op, event, nil
}

// JobFailurePrefix starts the last error of an event whose job a worker
// gave up on, for people reading it. Nothing reads it back: where a dead
// letter gave up and the job's attempts are columns of their own
// (OutboxEvent.FailedIn and JobAttempts, sql/025_dead_letter_stage.sql).
const JobFailurePrefix = "job failed: "

// JobFailure is the last error of an event whose job a worker gave up on
// after attempts runs in one delivery (its first and its retries), for
// cause. The attempts come first, so that bounding a long cause cannot cut
// them from what people read.
func JobFailure(attempts int, cause string) string {
	if attempts < 1 {
		return JobFailurePrefix + cause
	}
	unit := "attempts"
	if attempts == 1 {
		unit = "attempt"
	}
	return fmt.Sprintf("%safter %d %s: %s", JobFailurePrefix, attempts, unit, cause)
}

// ParkedByWorker reports whether e is an event a worker parked
// (ports.JobWaits.Defer) and that nobody has taken up since: pending,
// unlocked, with the kind of wait the worker recorded.
func (e OutboxEvent) ParkedByWorker() bool {
	return e.Status == OutboxPending && e.LockedBy == "" && e.WaitKind != ""
}

// JobOperationID reads the operation a job's payload names: every job
// payload embeds JobOperation (see JobSpec.Payload). False when the
// payload is not a job's.
func JobOperationID(payload json.RawMessage) (uuid.UUID, bool) {
	var p JobOperation
	if json.Unmarshal(payload, &p) != nil || p.OperationID == uuid.Nil {
		return uuid.Nil, false
	}
	return p.OperationID, true
}
