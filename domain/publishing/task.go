package publishing

import (
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is a first publication as the steps every job shares see it.
var Task = jobs.TaskTable[model.Publication](model.OperationListingPublish, "publication", model.EventListingPublish,
	ports.Tx.Publications)
