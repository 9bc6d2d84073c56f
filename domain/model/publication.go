package model

import (
	"github.com/google/uuid"
)

// The jobs of first publications: the event type that asks a worker for one
// (it names the job) and the kind of the operation that tracks it (what
// users see).
const (
	EventListingPublish     = "listing.publish"
	OperationListingPublish = "listing.publish"
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

// Task is the publication the job works on (domain/jobs).
func (j ListingPublish) Task() uuid.UUID { return j.PublicationID }
