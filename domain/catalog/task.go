package catalog

import (
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is a catalog sync as the steps every job shares see it.
var Task = jobs.TaskTable[model.CatalogSync](jobs.Names{
	EventType: model.EventCatalogSync, OperationKind: model.OperationCatalogSync, ResourceType: "catalog_sync",
}, ports.Tx.Syncs)

// Kind is the catalog sync in the list of task kinds (app/kinds.go).
var Kind = Task.Kind()
