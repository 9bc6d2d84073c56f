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
