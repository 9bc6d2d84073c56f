package model

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
)

// OutboxStatus is where an outbox event is in its delivery.
type OutboxStatus string

const (
	OutboxPending     OutboxStatus = "pending"
	OutboxDispatching OutboxStatus = "dispatching"
	OutboxDispatched  OutboxStatus = "dispatched"
	OutboxDeadLetter  OutboxStatus = "dead_letter"
)

// OutboxEvent is a job recorded in the same transaction as the business rows
// that asked for it. Its payload holds ids, versions and immutable snapshots
// only: never credentials or signed URLs (see CheckPayloadSafe).
type OutboxEvent struct {
	ID            uuid.UUID
	WorkspaceID   uuid.UUID
	Type          string
	AggregateType string
	AggregateID   uuid.UUID
	Payload       json.RawMessage
	Status        OutboxStatus
	AttemptCount  int
	NextAttemptAt time.Time
	LockedBy      string
	LockedUntil   time.Time
	// LastError is a sanitized, bounded description of the last failure.
	LastError    string
	Traceparent  string
	CreatedAt    time.Time
	DispatchedAt time.Time
	// Destination and OrderingKey are the job's (JobSpec), for the worker.
	Destination string
	OrderingKey string
	// JobAttempts is how many of the job's runs failed by its own fault
	// (ports.JobWaits), apart from AttemptCount, the Dispatcher's.
	JobAttempts int
	// WaitKind and WaitedFor are, for an event whose job a worker parked
	// (JobWait), why and for which destination; LastError then holds the
	// reason for people. Both are cleared with every later failure, give-up
	// or withdrawal that writes a last error of its own (ClearWait), and
	// kept while the event is claimed and published again, so the message
	// tells the worker what its job waited for.
	WaitKind  JobWaitKind
	WaitedFor string
	// FailedIn is, for a dead letter, where it gave up: its delivery (the
	// Dispatcher could not publish it) or its job (the worker gave up, and
	// JobAttempts are the runs it made). Empty for any other status.
	FailedIn DeadLetterStage
}

// DeadLetterStage is where a dead letter gave up (OutboxEvent.FailedIn).
type DeadLetterStage string

const (
	// FailedInDelivery: the Dispatcher could not publish the event.
	FailedInDelivery DeadLetterStage = "delivery"
	// FailedInJob: the event was delivered and the worker gave up on its
	// job (task and operation failed).
	FailedInJob DeadLetterStage = "job"
)

// ClearWait forgets what a worker parked e for, as every write of a last
// error other than a park's does.
func (e *OutboxEvent) ClearWait() { e.WaitKind, e.WaitedFor = "", "" }

// LeaseExpiredErrorFormat is the last_error of an event taken over after its
// lease expired: the Dispatcher that held it crashed or hung, perhaps
// because of this very event, so the takeover counts as an attempt and a
// poison event still ends in dead_letter. %s is the attempt it counted (the
// form PostgreSQL's format() and LeaseExpiredError both fill in).
const LeaseExpiredErrorFormat = "lease expired on attempt %s: the dispatcher holding it crashed or hung"

// LeaseExpiredError is LeaseExpiredErrorFormat for attempt.
func LeaseExpiredError(attempt int) string {
	return strings.Replace(LeaseExpiredErrorFormat, "%s", strconv.Itoa(attempt), 1)
}

// NewOutboxEvent builds a pending event, refusing payloads that could carry a
// secret. payload is marshalled with encoding/json; pass a typed struct.
func NewOutboxEvent(id, workspace uuid.UUID, eventType, aggregateType string, aggregateID uuid.UUID, payload any, now time.Time) (OutboxEvent, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return OutboxEvent{}, domain.Wrap(domain.CodeInternal, err, "outbox payload cannot be encoded")
	}
	if err := CheckPayloadSafe(raw); err != nil {
		return OutboxEvent{}, err
	}
	return OutboxEvent{
		ID:            id,
		WorkspaceID:   workspace,
		Type:          eventType,
		AggregateType: aggregateType,
		AggregateID:   aggregateID,
		Payload:       raw,
		Status:        OutboxPending,
		NextAttemptAt: now,
		CreatedAt:     now,
	}, nil
}
