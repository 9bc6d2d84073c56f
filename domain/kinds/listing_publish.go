package kinds

import (
	"net/http"

	"github.com/oncehq/once/domain/model"
)

// ListingPublish publishes a product on a store; a succeeded publication
// is a record kept (it says the product is listed).
var ListingPublish = Kind{EventType: model.EventListingPublish, OperationKind: model.OperationListingPublish, ResourceType: "publication", Table: "publications", Retention: ExpiresFailed,
	Conflict: &Conflict{Code: "ALREADY_PUBLISHED", Status: http.StatusConflict, Help: "The product already has a live publication on this store; `resource_id` names it."}}
