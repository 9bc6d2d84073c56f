package publishing

import (
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is a first publication as the steps every job shares see it.
var Task = jobs.TaskTable[model.Publication](jobs.Names{
	EventType: model.EventListingPublish, OperationKind: model.OperationListingPublish, ResourceType: "publication",
}, ports.Tx.Publications)

// Kind is the first publication in the list of task kinds (app/kinds.go).
var Kind = Task.Kind()
