package media

import (
	"time"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is a media's processing as the steps every job shares see it: a job
// given up leaves the media rejected with the reason, a re-drive puts it
// back to processing.
var Task = jobs.StatusTable(jobs.Names{
	EventType: model.EventMediaProcess, OperationKind: model.OperationMediaProcess, ResourceType: "media",
}, ports.Tx.Media,
	func(m *model.Media) (*model.MediaStatus, *string, *time.Time) {
		return &m.Status, &m.Reason, &m.UpdatedAt
	},
	model.MediaProcessing, model.MediaRejected)

// Kind is the media processing in the list of task kinds (app/kinds.go).
var Kind = Task.Kind()
