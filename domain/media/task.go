package media

import (
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a media's processing as the steps every job shares see it: a job
// given up leaves the media rejected with the reason, a re-drive puts it
// back to processing.
var Task = jobs.StatusTable(domain.OperationMediaProcess, ports.Tx.Media,
	func(m *domain.Media) (*domain.MediaStatus, *string, *time.Time) {
		return &m.Status, &m.Reason, &m.UpdatedAt
	},
	domain.MediaProcessing, domain.MediaRejected)
