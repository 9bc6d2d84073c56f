package media

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a media's processing as the steps every job shares see it: a job
// given up leaves the media rejected with the reason, a re-drive puts it
// back to processing.
var Task jobs.Task = jobs.TaskRow[domain.Media, domain.MediaStatus]{
	Kind: domain.OperationMediaProcess,
	Get: func(ctx context.Context, tx ports.Tx, id uuid.UUID) (domain.Media, error) {
		return tx.Media().Get(ctx, id)
	},
	Save: func(ctx context.Context, tx ports.Tx, m domain.Media) error { return tx.Media().Update(ctx, m) },
	State: func(m *domain.Media) (*domain.MediaStatus, *string, *time.Time) {
		return &m.Status, &m.Reason, &m.UpdatedAt
	},
	Active:   func(s domain.MediaStatus) bool { return s == domain.MediaProcessing },
	Failed:   domain.MediaRejected,
	Reopened: domain.MediaProcessing,
}
