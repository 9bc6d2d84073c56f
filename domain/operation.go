package domain

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
)

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
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Operation kinds.
const (
	OperationStoreVerify = "store.verify"
)
