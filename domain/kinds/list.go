package kinds

import (
	"net/http"

	"github.com/oncehq/once/domain/model"
)

// All are the kinds of background task, one entry each. Adding a kind is
// its own files and its entry here (docs/architecture.md, "Adding a task
// type"); app's check of the kinds fails until each is fully wired.
var All = []Kind{
	{EventType: model.EventStoreCredentialsVerify, OperationKind: model.OperationStoreVerify, ResourceType: "store", Table: "stores", Retention: KeptWithRow},
	{EventType: model.EventMediaProcess, OperationKind: model.OperationMediaProcess, ResourceType: "media", Table: "media", Retention: KeptWithRow},
	{EventType: model.EventMaterialTransfer, OperationKind: model.OperationMaterialTransfer, ResourceType: "material_transfer", Table: "material_transfers", Retention: ExpiresFinished},
	{EventType: model.EventListingPublish, OperationKind: model.OperationListingPublish, ResourceType: "publication", Table: "publications", Retention: ExpiresFailed,
		Conflict: &Conflict{Code: "ALREADY_PUBLISHED", Status: http.StatusConflict, Help: "The product already has a live publication on this store; `resource_id` names it."}},
	{EventType: model.EventCatalogSync, OperationKind: model.OperationCatalogSync, ResourceType: "catalog_sync", Table: "catalog_syncs", Retention: ExpiresFinished,
		Conflict: &Conflict{Code: "SYNC_ALREADY_ACTIVE", Status: http.StatusConflict, Help: "The store already has a catalog sync queued or running; `resource_id` names it. Poll it instead."}},
	{EventType: model.EventAITask, OperationKind: model.OperationAITask, ResourceType: "ai_task", Table: "ai_tasks", Retention: ExpiresFinished},
}

// Of is the kind of event type eventType; false if none is declared.
func Of(eventType string) (Kind, bool) {
	for _, k := range All {
		if k.EventType == eventType {
			return k, true
		}
	}
	return Kind{}, false
}
