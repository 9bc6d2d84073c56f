package publishing

import (
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a first publication as the steps every job shares see it.
var Task = jobs.TaskTable[domain.Publication](domain.OperationListingPublish, "publication", domain.EventListingPublish,
	ports.Tx.Publications)
