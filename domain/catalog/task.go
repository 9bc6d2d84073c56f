package catalog

import (
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is a catalog sync as the steps every job shares see it.
var Task = jobs.TaskTable[model.CatalogSync](model.OperationCatalogSync, "catalog_sync", model.EventCatalogSync, ports.Tx.Syncs)
