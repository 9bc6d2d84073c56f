package model

import (
	"github.com/google/uuid"
)

// The jobs of publications: the event type that asks a worker for one
// (it names the job) and the kind of the operation that tracks it (what
// users see).
const (
	EventListingPublish     = "listing.publish"
	OperationListingPublish = "listing.publish"
)

// Publication is one publish of a product to a store: a task whose worker
// puts the product's listing on the platform (created by the first
// publication, replaced by later ones: one listing per shop and product)
// with the task's request token, so retries never make two listings.
type Publication struct {
	TaskState
	ProductID uuid.UUID
	StoreID   uuid.UUID
	// ProductRevision is the draft revision being published (an immutable
	// snapshot reference).
	ProductRevision   int
	ExternalListingID string
	// WaitsBehind is the publication of the same product and store that
	// was the last one when this one was requested (uuid.Nil for the
	// first): this one starts only once that one ended.
	WaitsBehind uuid.UUID
}

// ListingPublish is the payload of EventListingPublish.
type ListingPublish struct {
	PublicationID   uuid.UUID `json:"publication_id"`
	ProductRevision int       `json:"product_revision"`
	JobOperation
}

// Task is the publication the job works on (domain/jobs).
func (j ListingPublish) Task() uuid.UUID { return j.PublicationID }
