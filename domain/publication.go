package domain

import (
	"time"

	"github.com/google/uuid"
)

// Publication is the first publish of a product to a store: a task whose
// worker creates the listing on the platform with the task id as the
// request token, so the platform never holds two listings for it.
type Publication struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	ProductID   uuid.UUID
	StoreID     uuid.UUID
	OperationID uuid.UUID
	// ProductRevision is the draft revision being published (an immutable
	// snapshot reference).
	ProductRevision   int
	Status            TaskStatus
	ExternalListingID string
	Reason            string
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// ListingPublish is the payload of EventListingPublish.
type ListingPublish struct {
	PublicationID   uuid.UUID `json:"publication_id"`
	ProductRevision int       `json:"product_revision"`
	OperationID     uuid.UUID `json:"operation_id"`
}

// JobIDs names the operation and the task of the job (domain/jobs).
func (j ListingPublish) JobIDs() (operationID, taskID uuid.UUID) {
	return j.OperationID, j.PublicationID
}

// CatalogSync is a full catalog sync of one store: the worker reads every
// listing of the store from the platform into our catalogue. At most one is
// active per store, which the database enforces.
type CatalogSync struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	StoreID     uuid.UUID
	OperationID uuid.UUID
	Status      TaskStatus
	ItemsSynced int
	Reason      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// CatalogItem is one listing of a store as last synced.
type CatalogItem struct {
	WorkspaceID uuid.UUID
	StoreID     uuid.UUID
	ExternalID  string
	Title       string
	PriceMinor  int64
	Currency    string
	SyncedAt    time.Time
}

// CatalogSyncRun is the payload of EventCatalogSync.
type CatalogSyncRun struct {
	SyncID      uuid.UUID `json:"sync_id"`
	OperationID uuid.UUID `json:"operation_id"`
}

// JobIDs names the operation and the task of the job (domain/jobs).
func (j CatalogSyncRun) JobIDs() (operationID, taskID uuid.UUID) { return j.OperationID, j.SyncID }

// TaskFields says where the Publication keeps its task state (domain/jobs).
func (p *Publication) TaskFields() (*TaskStatus, *string, *time.Time, uuid.UUID) {
	return &p.Status, &p.Reason, &p.UpdatedAt, p.OperationID
}

// TaskFields says where the CatalogSync keeps its task state (domain/jobs).
func (s *CatalogSync) TaskFields() (*TaskStatus, *string, *time.Time, uuid.UUID) {
	return &s.Status, &s.Reason, &s.UpdatedAt, s.OperationID
}
