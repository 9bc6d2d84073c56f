package model

import (
	"time"

	"github.com/google/uuid"
)

// OperationStatus is the user-visible progress of asynchronous work.
type OperationStatus string

const (
	OperationPending   OperationStatus = "pending"
	OperationRunning   OperationStatus = "running"
	OperationSucceeded OperationStatus = "succeeded"
	OperationFailed    OperationStatus = "failed"
	// OperationCancelled: a user cancelled the operation before its job
	// called the external system, or its job stopped at a cancel
	// request; its job never runs (again).
	OperationCancelled OperationStatus = "cancelled"
)

// OperationStatuses are the states an operation can be in, in the order
// an operation goes through them.
var OperationStatuses = []OperationStatus{
	OperationPending, OperationRunning, OperationSucceeded, OperationFailed, OperationCancelled,
}

// Operation is the user-visible record of one piece of asynchronous work. It
// is the truth a client polls; the outbox is only how the work gets delivered.
type Operation struct {
	ID           uuid.UUID
	WorkspaceID  uuid.UUID
	Kind         string
	Status       OperationStatus
	ResourceType string
	ResourceID   uuid.UUID
	// Error is a sanitized, client-safe failure reason; empty unless failed.
	Error     string
	CreatedBy uuid.UUID
	// CancelRequestedAt is when a user asked to cancel the operation while
	// its job was running (zero: never). The job stops where its kind can;
	// otherwise the operation ends with what the external system did.
	CancelRequestedAt time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// Delivery is how the event that carries the operation's job is
	// getting on, when it is still kept. It is read from the outbox, not
	// stored with the operation: repositories ignore it.
	Delivery *Delivery
}

// Delivery is what a user may know of the delivery of an operation's job:
// whether it waits (and until when, after how many failed attempts), was
// handed to the workers, or is parked for an operator (dead_letter), with
// the last failure, sanitized. It explains an operation that stays pending.
type Delivery struct {
	Status   OutboxStatus
	Attempts int
	// NextAttemptAt is when the next attempt is due; zero unless pending.
	NextAttemptAt time.Time
	LastError     string
}

// DeliveryOf describes e's delivery.
func DeliveryOf(e OutboxEvent) *Delivery {
	d := &Delivery{Status: e.Status, Attempts: e.AttemptCount, LastError: e.LastError}
	if e.Status == OutboxPending {
		d.NextAttemptAt = e.NextAttemptAt
	}
	return d
}

// Start marks the operation running: a worker has taken it up.
func (op *Operation) Start(now time.Time) {
	op.Status, op.UpdatedAt = OperationRunning, now
}

// Succeed ends the operation succeeded.
func (op *Operation) Succeed(now time.Time) {
	op.Status, op.Error, op.UpdatedAt = OperationSucceeded, "", now
}

// Fail ends the operation failed with reason, which the caller has made
// client-safe (see SanitizeText): it is shown to users as it is.
func (op *Operation) Fail(reason string, now time.Time) {
	op.Status, op.Error, op.UpdatedAt = OperationFailed, reason, now
}

// Cancel ends the operation cancelled: its job did not call the external
// system, and never will.
func (op *Operation) Cancel(now time.Time) {
	op.Status, op.Error, op.UpdatedAt = OperationCancelled, "", now
}

// CancelRequested reports whether a user asked to cancel the operation
// while its job ran.
func (op *Operation) CancelRequested() bool { return !op.CancelRequestedAt.IsZero() }

// Finished reports whether the operation ended, succeeded, failed or
// cancelled, so nothing more is to be done for it.
func (op *Operation) Finished() bool {
	return op.Status == OperationSucceeded || op.Status == OperationFailed || op.Status == OperationCancelled
}

// Reopen puts a failed operation back to pending: an operator re-drove
// the job that had given up, and a worker will take it up again.
func (op *Operation) Reopen(now time.Time) {
	op.Status, op.Error, op.UpdatedAt = OperationPending, "", now
}
