package model

import (
	"time"

	"github.com/google/uuid"
)

// The jobs of catalog syncs: the event type that asks a worker for one
// (it names the job) and the kind of the operation that tracks it (what
// users see).
const (
	EventCatalogSync     = "catalog.sync"
	OperationCatalogSync = "catalog.sync"
)

// CatalogSync is a full catalog sync of one store: the worker reads every
// listing of the store from the platform into our catalogue. At most one is
// active per store, which the database enforces.
type CatalogSync struct {
	TaskState
	StoreID     uuid.UUID
	ItemsSynced int
}

// CatalogSyncRun is the payload of EventCatalogSync.
type CatalogSyncRun struct {
	SyncID uuid.UUID `json:"sync_id"`
	JobOperation
}

// Task is the sync the job works on (domain/jobs).
func (j CatalogSyncRun) Task() uuid.UUID { return j.SyncID }

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
