package verification

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a store's verification as the steps every job shares see it: a
// job given up leaves the store verification_failed, a re-drive puts it
// back to pending_verification.
var Task jobs.Task = jobs.TaskRow[domain.Store, domain.StoreStatus]{
	Kind: domain.OperationStoreVerify,
	Get: func(ctx context.Context, tx ports.Tx, id uuid.UUID) (domain.Store, error) {
		return tx.Stores().Get(ctx, id)
	},
	Save: func(ctx context.Context, tx ports.Tx, s domain.Store) error { return tx.Stores().Update(ctx, s) },
	State: func(s *domain.Store) (*domain.StoreStatus, *string, *time.Time) {
		return &s.Status, nil, &s.UpdatedAt
	},
	Active:   func(s domain.StoreStatus) bool { return s == domain.StorePendingVerification },
	Failed:   domain.StoreVerificationFailed,
	Reopened: domain.StorePendingVerification,
}
