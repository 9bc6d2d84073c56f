package model

import (
	"time"

	"github.com/google/uuid"
)

// Product is a listing draft in our catalogue. Drafts are saved with
// optimistic concurrency: every save bumps Revision, and a save must name the
// revision it was based on (If-Match), so two editors cannot overwrite each
// other unknowingly.
type Product struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Title       string
	Description string
	// PriceMinor is the price in the currency's minor unit (cents).
	PriceMinor int64
	Currency   string
	// MediaIDs are the product's images, in order.
	MediaIDs  []uuid.UUID
	Revision  int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Operation kinds and event types of the first-batch scenarios. An event
// type names the job; the operation kind names what the user sees.
const (
	OperationMediaProcess     = "media.process"
	OperationMaterialTransfer = "material.transfer"
	OperationListingPublish   = "listing.publish"
	OperationCatalogSync      = "catalog.sync"
	OperationAITask           = "ai.task"

	EventMediaProcess     = "media.process"
	EventMaterialTransfer = "material.transfer"
	EventListingPublish   = "listing.publish"
	EventCatalogSync      = "catalog.sync"
	EventAITask           = "ai.task"
)
