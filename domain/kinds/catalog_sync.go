package kinds

import (
	"net/http"

	"github.com/oncehq/once/domain/model"
)

// CatalogSync reads a store's listings into our catalogue, one active
// sync per store.
var CatalogSync = Kind{EventType: model.EventCatalogSync, OperationKind: model.OperationCatalogSync, ResourceType: "catalog_sync", Table: "catalog_syncs", Retention: ExpiresFinished,
	Conflict: &Conflict{Code: "SYNC_ALREADY_ACTIVE", Status: http.StatusConflict, Help: "The store already has a catalog sync queued or running; `resource_id` names it. Poll it instead."}}
