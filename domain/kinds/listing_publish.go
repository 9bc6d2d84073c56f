package kinds

import "github.com/oncehq/once/domain/model"

// ListingPublish publishes a product on a store; a succeeded publication
// is a record kept (it says the product is listed). A product may have
// several live publications to one store: they run one after another, in
// the order they were committed (their ordering key).
var ListingPublish = Kind{EventType: model.EventListingPublish, OperationKind: model.OperationListingPublish, ResourceType: "publication", Table: "publications", Retention: ExpiresFailed}
