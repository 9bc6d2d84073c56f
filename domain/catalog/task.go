package catalog

import (
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a catalog sync as the steps every job shares see it.
var Task = jobs.TaskTable[domain.CatalogSync](domain.OperationCatalogSync, "catalog_sync", domain.EventCatalogSync, ports.Tx.Syncs)
