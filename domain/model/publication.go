package model

import (
	"time"

	"github.com/google/uuid"
)

// Publication is the first publish of a product to a store: a task whose
// worker creates the listing on the platform with the task id as the
// request token, so the platform never holds two listings for it.
type Publication struct {
	TaskState
	ProductID uuid.UUID
	StoreID   uuid.UUID
	// ProductRevision is the draft revision being published (an immutable
	// snapshot reference).
	ProductRevision   int
	ExternalListingID string
}

// ListingPublish is the payload of EventListingPublish.
type ListingPublish struct {
	PublicationID   uuid.UUID `json:"publication_id"`
	ProductRevision int       `json:"product_revision"`
	JobOperation
}

// CatalogSync is a full catalog sync of one store: the worker reads every
// listing of the store from the platform into our catalogue. At most one is
// active per store, which the database enforces.
type CatalogSync struct {
	TaskState
	StoreID     uuid.UUID
	ItemsSynced int
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
	SyncID uuid.UUID `json:"sync_id"`
	JobOperation
}
