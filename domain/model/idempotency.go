package model

import (
	"time"

	"github.com/google/uuid"
)

// IdempotencyScope identifies one logical request: the same key means the
// same request only for the same workspace, user, method and path.
type IdempotencyScope struct {
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
	Method      string
	// Path is the normalized concrete path, ids included.
	Path string
	Key  uuid.UUID
}

// IdempotencyStatus is the state of a record. A committed record is always
// completed: the record is created and completed in the business transaction,
// so an in-progress record is only ever seen by that transaction.
type IdempotencyStatus string

const (
	IdempotencyInProgress IdempotencyStatus = "in_progress"
	IdempotencyCompleted  IdempotencyStatus = "completed"
)

// SavedResponse is the safe summary of a response that a replay returns: the
// status, allow-listed headers, and a body with no secrets in it.
type SavedResponse struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// IdempotencyRecord is one stored request outcome.
type IdempotencyRecord struct {
	Scope IdempotencyScope
	// FingerprintKeyID names the server secret the fingerprint was made with,
	// so a rotated secret can still recognise in-flight retries.
	FingerprintKeyID string
	Fingerprint      []byte
	Status           IdempotencyStatus
	Response         SavedResponse
	CreatedAt        time.Time
	CompletedAt      time.Time
	ExpiresAt        time.Time
}
